#!/bin/bash
set -euo pipefail
cd /app
find /app/notes -maxdepth 1 -type f -name '*.txt' | wc -l > /app/count.txt
