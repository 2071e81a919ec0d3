#!/bin/bash
set -euo pipefail
cd /app
awk -F, 'NR > 1 { s += $2 } END { printf "%.2f\n", s }' /app/sales.csv > /app/total.txt
