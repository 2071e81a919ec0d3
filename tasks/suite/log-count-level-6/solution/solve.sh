#!/bin/bash
set -euo pipefail
cd /app
awk '$3 == "INFO"' /app/gateway.log | wc -l > /app/info_count.txt
