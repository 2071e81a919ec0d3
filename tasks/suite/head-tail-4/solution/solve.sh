#!/bin/bash
set -euo pipefail
cd /app
tail -n +2 /app/events.csv > /app/skip_events.txt
