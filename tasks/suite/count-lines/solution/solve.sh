#!/bin/bash
set -euo pipefail
cd /app
wc -l < /app/poem.txt | tr -d ' ' > /app/line_count.txt
