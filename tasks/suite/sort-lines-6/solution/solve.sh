#!/bin/bash
set -euo pipefail
cd /app
LC_ALL=C sort -n /app/scores.txt > /app/scores_sorted.txt
