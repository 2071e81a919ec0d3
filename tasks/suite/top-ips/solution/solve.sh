#!/bin/bash
set -euo pipefail
cd /app
awk '{print $1}' /app/access.log | LC_ALL=C sort | uniq -c | awk '{print $2, $1}' \
  | LC_ALL=C sort -k2,2nr -k1,1 | head -n 3 > /app/top_ips.txt
