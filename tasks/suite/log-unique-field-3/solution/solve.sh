#!/bin/bash
set -euo pipefail
cd /app
awk '{print $4}' /app/http.log | LC_ALL=C sort -u > /app/statuss.txt
