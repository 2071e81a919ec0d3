#!/bin/bash
set -euo pipefail
cd /app
tail -n +2 /app/members.csv | cut -d, -f2 > /app/names.txt
