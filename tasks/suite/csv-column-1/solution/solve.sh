#!/bin/bash
set -euo pipefail
cd /app
tail -n +2 /app/people.csv | cut -d, -f1 > /app/names.txt
