#!/bin/bash
set -euo pipefail
cd /app
awk '{print $3}' /app/requests.log | LC_ALL=C sort -u > /app/paths.txt
