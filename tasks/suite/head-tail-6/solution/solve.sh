#!/bin/bash
set -euo pipefail
cd /app
tail -n +2 /app/readings.csv > /app/skip_readings.txt
