#!/bin/bash
set -euo pipefail
cd /app
grep -F '[ERROR]' /app/billing.log | head -n 1 > /app/first_error.txt
