#!/bin/bash
set -euo pipefail
cd /app
LC_ALL=C sort -u /app/names.txt > /app/names_sorted.txt
