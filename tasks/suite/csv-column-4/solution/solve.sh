#!/bin/bash
set -euo pipefail
cd /app
tail -n +2 /app/stock.csv | cut -d, -f2 > /app/fruits.txt
