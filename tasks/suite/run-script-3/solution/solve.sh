#!/bin/bash
set -euo pipefail
cd /app
python3 /app/inventory.py delta > /app/inventory.txt
