#!/bin/bash
set -euo pipefail
cd /app
grep -F '[ERROR]' /app/backup.log | tail -n 1 > /app/last_error.txt
