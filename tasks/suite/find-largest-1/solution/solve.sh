#!/bin/bash
set -euo pipefail
cd /app
ls -S /app/uploads | head -n 1 > /app/largest.txt
