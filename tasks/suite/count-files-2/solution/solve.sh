#!/bin/bash
set -euo pipefail
cd /app
find /app/logs -maxdepth 1 -type f -name '*.log' | wc -l > /app/count.txt
