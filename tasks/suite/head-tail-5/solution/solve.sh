#!/bin/bash
set -euo pipefail
cd /app
tail -n 6 /app/ranking.txt > /app/tail_ranking.txt
