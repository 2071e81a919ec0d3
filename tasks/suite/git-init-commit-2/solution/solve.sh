#!/bin/bash
set -euo pipefail
cd /app
cd /app/scripts
git init -q -b main
echo '.env' > .gitignore
git add -A
git -c user.name=oracle -c user.email=oracle@example.com commit -q -m 'First version'
