#!/bin/bash
set -euo pipefail
cd /app
awk -F, 'NR == 1 || $3 == "0"' /app/products.csv > /app/out_of_stock.csv
