#!/bin/bash
set -euo pipefail
cd /app
ls -S /app/videos | head -n 1 > /app/largest.txt
