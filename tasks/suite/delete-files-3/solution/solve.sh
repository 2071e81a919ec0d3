#!/bin/bash
set -euo pipefail
cd /app
find /app/src -type f -name '*.pyc' -delete
