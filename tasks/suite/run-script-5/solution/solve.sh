#!/bin/bash
set -euo pipefail
cd /app
python3 /app/roster.py cloud > /app/roster.txt
