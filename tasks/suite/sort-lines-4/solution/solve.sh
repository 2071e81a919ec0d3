#!/bin/bash
set -euo pipefail
cd /app
LC_ALL=C sort -r /app/cities.txt > /app/cities_sorted.txt
