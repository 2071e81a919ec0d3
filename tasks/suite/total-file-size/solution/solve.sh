#!/bin/bash
set -euo pipefail
cd /app
find /app/data -type f -printf '%s\n' | awk '{s += $1} END {print s}' > /app/total_bytes.txt
