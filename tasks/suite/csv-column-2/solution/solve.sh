#!/bin/bash
set -euo pipefail
cd /app
tail -n +2 /app/orders.csv | cut -d, -f2 > /app/items.txt
