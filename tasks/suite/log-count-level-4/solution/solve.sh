#!/bin/bash
set -euo pipefail
cd /app
awk '$3 == "WARN"' /app/api.log | wc -l > /app/warn_count.txt
