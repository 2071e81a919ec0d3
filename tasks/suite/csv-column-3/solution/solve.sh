#!/bin/bash
set -euo pipefail
cd /app
tail -n +2 /app/staff.csv | cut -d, -f1 > /app/emails.txt
