#!/bin/bash
set -euo pipefail
cd /app
grep -F '[WARN]' /app/queue.log | tail -n 1 > /app/last_warn.txt
