#!/bin/bash
set -euo pipefail
cd /app
grep -F '[ERROR]' /app/sync.log | head -n 1 > /app/first_error.txt
