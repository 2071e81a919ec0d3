#!/bin/bash
set -euo pipefail
cd /app
printf '%s\n' '30 2 * * * /app/backup.sh' '0 9 * * 1 /app/report.sh' > /app/crontab.txt
