#!/bin/bash
set -euo pipefail
cd /app
for f in /app/notes/*.txt; do mv "$f" "${f%.txt}.md"; done
