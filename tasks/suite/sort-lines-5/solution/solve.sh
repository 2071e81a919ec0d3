#!/bin/bash
set -euo pipefail
cd /app
LC_ALL=C sort -u /app/guests.txt > /app/guests_sorted.txt
