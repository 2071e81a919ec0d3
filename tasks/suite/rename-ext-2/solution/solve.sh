#!/bin/bash
set -euo pipefail
cd /app
for f in /app/pictures/*.jpeg; do mv "$f" "${f%.jpeg}.jpg"; done
