#!/bin/bash
set -euo pipefail
cd /app
find /app/work -type f -name '*.tmp' -delete
