#!/bin/bash
set -euo pipefail
cd /app
awk '$3 == "WARN"' /app/server.log | wc -l > /app/warn_count.txt
