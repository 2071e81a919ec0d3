#!/bin/bash
set -euo pipefail
cd /app
cd /app/notes
git init -q -b main
git add -A
git -c user.name=oracle -c user.email=oracle@example.com commit -q -m 'Start the project'
