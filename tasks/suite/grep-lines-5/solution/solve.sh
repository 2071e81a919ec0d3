#!/bin/bash
set -euo pipefail
cd /app
grep -i -F 'timeout' /app/alerts.txt > /app/timeout_lines.txt
