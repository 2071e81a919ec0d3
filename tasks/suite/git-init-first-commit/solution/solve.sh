#!/bin/bash
set -euo pipefail
cd /app/notes
git init -q -b main
git add todo.txt ideas.txt meetings.txt
git -c user.name=oracle -c user.email=oracle@example.com commit -q -m "Initial commit"
