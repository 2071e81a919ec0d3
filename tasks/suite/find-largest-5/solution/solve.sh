#!/bin/bash
set -euo pipefail
cd /app
ls -S /app/tmp | head -n 1 > /app/largest.txt
