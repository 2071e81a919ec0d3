#!/bin/bash
set -euo pipefail
cd /app
for f in /app/config/*.yml; do mv "$f" "${f%.yml}.yaml"; done
