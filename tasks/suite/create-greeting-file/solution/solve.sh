#!/bin/bash
set -euo pipefail
cd /app
printf 'Hello, evoharness!\n' > /app/greeting.txt
