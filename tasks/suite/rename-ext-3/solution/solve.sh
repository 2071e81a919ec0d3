#!/bin/bash
set -euo pipefail
cd /app
for f in /app/site/*.htm; do mv "$f" "${f%.htm}.html"; done
