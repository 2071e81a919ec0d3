#!/bin/bash
set -euo pipefail
cd /app
awk '$3 == "ERROR"' /app/server.log | tail -n 1 > /app/last_error.txt
