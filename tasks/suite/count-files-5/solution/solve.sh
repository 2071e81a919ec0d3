#!/bin/bash
set -euo pipefail
cd /app
find /app/exports -type f -name '*.csv' | wc -l > /app/count.txt
