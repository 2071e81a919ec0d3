#!/bin/bash
set -euo pipefail
cd /app
tail -n +2 /app/users.csv | cut -d, -f3 > /app/emails.txt
