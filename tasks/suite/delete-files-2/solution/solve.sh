#!/bin/bash
set -euo pipefail
cd /app
find /app/site -type f -name '*.bak' -delete
