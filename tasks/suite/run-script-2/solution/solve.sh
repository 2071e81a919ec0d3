#!/bin/bash
set -euo pipefail
cd /app
cd /app/tools && bash ./summary.sh > /app/summary.txt
