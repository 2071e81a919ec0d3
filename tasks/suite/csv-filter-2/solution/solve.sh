#!/bin/bash
set -euo pipefail
cd /app
awk -F, 'NR == 1 || $2 == "pending"' /app/tickets.csv > /app/pending.csv
