#!/bin/bash
set -euo pipefail
cd /app
awk -F, 'NR == 1 || $2 == "alice"' /app/tasks.csv > /app/alice.csv
