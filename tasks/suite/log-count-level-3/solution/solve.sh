#!/bin/bash
set -euo pipefail
cd /app
awk '$3 == "ERROR"' /app/worker.log | wc -l > /app/error_count.txt
