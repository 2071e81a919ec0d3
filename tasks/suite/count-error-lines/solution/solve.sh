#!/bin/bash
set -euo pipefail
cd /app
awk '$3 == "ERROR"' /app/server.log | wc -l | tr -d ' ' > /app/error_count.txt
