#!/bin/bash
set -euo pipefail
cd /app
mkdir -p /app/bin
gcc -o /app/bin/hello /app/src/hello.c
