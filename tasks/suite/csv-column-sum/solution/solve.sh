#!/bin/bash
set -euo pipefail
cd /app
awk -F, 'NR > 1 {s += $3} END {printf "%.2f\n", s}' /app/sales.csv > /app/total.txt
