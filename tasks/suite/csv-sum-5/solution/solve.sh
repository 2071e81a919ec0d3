#!/bin/bash
set -euo pipefail
cd /app
awk -F, 'NR > 1 { s += $2 } END { printf "%.2f\n", s }' /app/donations.csv > /app/total.txt
