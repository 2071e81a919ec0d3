#!/bin/bash
set -euo pipefail
cd /app
cd /app/tools && bash ./weather.sh > /app/weather.txt
