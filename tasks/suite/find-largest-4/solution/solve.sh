#!/bin/bash
set -euo pipefail
cd /app
ls -S /app/exports | tail -n 1 > /app/smallest.txt
