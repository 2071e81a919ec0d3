#!/bin/bash
set -euo pipefail
cd /app
awk -F, 'NR == 1 || $2 == "refunded"' /app/orders.csv > /app/refunded.csv
