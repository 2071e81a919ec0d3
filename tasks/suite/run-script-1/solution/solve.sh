#!/bin/bash
set -euo pipefail
cd /app
python3 /app/report.py cobalt > /app/report.txt
