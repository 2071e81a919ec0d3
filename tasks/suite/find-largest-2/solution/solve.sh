#!/bin/bash
set -euo pipefail
cd /app
ls -S /app/cache | tail -n 1 > /app/smallest.txt
