#!/bin/bash
set -euo pipefail
cd /app
LC_ALL=C sort -n /app/sizes.txt > /app/sizes_sorted.txt
