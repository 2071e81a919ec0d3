#!/bin/bash
set -euo pipefail
cd /app
cd /app/dotfiles
git init -q -b main
echo 'secrets.txt' > .gitignore
git add -A
git -c user.name=oracle -c user.email=oracle@example.com commit -q -m 'Import files'
