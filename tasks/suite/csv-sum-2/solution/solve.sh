#!/bin/bash
set -euo pipefail
cd /app
awk -F, 'NR > 1 { s += $1 } END { print s }' /app/hours.csv > /app/total.txt
