#!/bin/bash
set -euo pipefail
cd /app
sed -i 's/Monday/Friday/g' /app/schedule.txt
