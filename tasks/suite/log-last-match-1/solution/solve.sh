#!/bin/bash
set -euo pipefail
cd /app
grep -F '[ERROR]' /app/app.log | tail -n 1 > /app/last_error.txt
