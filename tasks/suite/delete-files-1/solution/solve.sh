#!/bin/bash
set -euo pipefail
cd /app
find /app/build -type f -name '*.tmp' -delete
