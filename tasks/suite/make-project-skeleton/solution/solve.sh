#!/bin/bash
set -euo pipefail
cd /app
mkdir -p /app/myproj/src/myproj /app/myproj/tests
: > /app/myproj/src/myproj/__init__.py
printf '# myproj\n' > /app/myproj/README.md
printf '__pycache__/\n' > /app/myproj/.gitignore
