#!/bin/bash
set -euo pipefail
cd /app
LC_ALL=C sort /app/names.txt > /app/names_sorted.txt
