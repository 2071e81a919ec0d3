#!/bin/bash
set -euo pipefail
cd /app
mkdir -p /app/dist
gcc -o /app/dist/banner /app/src/banner.c
