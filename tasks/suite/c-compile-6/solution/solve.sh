#!/bin/bash
set -euo pipefail
cd /app
mkdir -p /app/build
gcc -o /app/build/square /app/src/main.c /app/src/run.c
