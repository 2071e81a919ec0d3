#!/bin/bash
set -euo pipefail
cd /app
awk '$2 == "ERROR" {print substr($1, 1, 13)}' /app/app.log | sort | uniq -c | awk '{print $2, $1}' > /app/errors_by_hour.txt
