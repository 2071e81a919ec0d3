#!/bin/bash
set -euo pipefail
cd /app
cd /app/tools && bash ./status.sh > /app/status.txt
