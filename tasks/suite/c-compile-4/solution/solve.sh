#!/bin/bash
set -euo pipefail
cd /app
mkdir -p /app/bin
gcc -o /app/bin/count /app/src/main.c /app/src/run.c
