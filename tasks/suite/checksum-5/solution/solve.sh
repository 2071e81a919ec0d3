#!/bin/bash
set -euo pipefail
cd /app
sha256sum /app/meadow-1.bin | cut -d' ' -f1 > /app/meadow-1.bin.sha256
