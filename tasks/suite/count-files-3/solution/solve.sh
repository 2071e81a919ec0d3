#!/bin/bash
set -euo pipefail
cd /app
find /app/photos -type f -name '*.jpg' | wc -l > /app/count.txt
