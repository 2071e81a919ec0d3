#!/bin/bash
set -euo pipefail
cd /app
awk -F, 'NR == 1 || $2 == "Lima"' /app/customers.csv > /app/Lima.csv
