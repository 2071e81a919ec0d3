#!/bin/bash
set -euo pipefail
cd /app
find /app/docs -type f -name '*.swp' -delete
