#!/bin/bash
set -euo pipefail
cd /app
ls -S /app/media | tail -n 1 > /app/smallest.txt
