#!/bin/bash
set -euo pipefail
cd /app
grep -o 'user=[^ ]*' /app/sudo.log | cut -d= -f2 | LC_ALL=C sort -u > /app/users.txt
