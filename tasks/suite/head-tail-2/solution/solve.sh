#!/bin/bash
set -euo pipefail
cd /app
tail -n 4 /app/history.txt > /app/tail_history.txt
