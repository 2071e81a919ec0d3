#!/bin/bash
set -euo pipefail
cd /app
awk '!seen[$0]++' /app/names.txt > /app/unique.txt
