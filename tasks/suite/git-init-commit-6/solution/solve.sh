#!/bin/bash
set -euo pipefail
cd /app
cd /app/homework
git init -q -b main
echo 'debug.log' > .gitignore
git add -A
git -c user.name=oracle -c user.email=oracle@example.com commit -q -m 'Initial import'
