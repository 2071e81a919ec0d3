#!/bin/bash
set -euo pipefail
cd /app
find /app/wiki -maxdepth 1 -type f -name '*.md' | wc -l > /app/count.txt
