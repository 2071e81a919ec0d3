#!/bin/bash
set -euo pipefail
cd /app
find /app/project -type f -name '*.py' | wc -l > /app/count.txt
