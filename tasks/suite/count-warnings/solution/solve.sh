#!/bin/bash
set -euo pipefail
cd /app
awk '$3 == "WARN"' /app/app.log | wc -l | tr -d ' ' > /app/warn_count.txt
