#!/bin/bash
set -euo pipefail
cd /app
for f in /app/posts/*.markdown; do mv "$f" "${f%.markdown}.md"; done
