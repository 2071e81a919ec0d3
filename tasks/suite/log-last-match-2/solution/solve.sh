#!/bin/bash
set -euo pipefail
cd /app
grep -F '[WARN]' /app/deploy.log | head -n 1 > /app/first_warn.txt
