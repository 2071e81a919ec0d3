#!/bin/bash
set -euo pipefail
cd /app
tail -n +2 /app/trips.csv | cut -d, -f1 > /app/froms.txt
