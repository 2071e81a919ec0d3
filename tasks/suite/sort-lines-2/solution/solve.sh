#!/bin/bash
set -euo pipefail
cd /app
LC_ALL=C sort -u /app/fruits.txt > /app/fruits_sorted.txt
