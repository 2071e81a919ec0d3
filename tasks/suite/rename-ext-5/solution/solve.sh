#!/bin/bash
set -euo pipefail
cd /app
for f in /app/letters/*.text; do mv "$f" "${f%.text}.txt"; done
