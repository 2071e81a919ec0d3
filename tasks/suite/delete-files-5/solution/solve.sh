#!/bin/bash
set -euo pipefail
cd /app
find /app/patches -type f -name '*.orig' -delete
