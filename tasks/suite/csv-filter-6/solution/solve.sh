#!/bin/bash
set -euo pipefail
cd /app
awk -F, 'NR == 1 || $2 == "crime"' /app/books.csv > /app/crime.csv
