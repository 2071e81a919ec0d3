#!/bin/bash
set -euo pipefail
cd /app
mkdir -p /app/out
gcc -o /app/out/sum /app/src/sum.c
