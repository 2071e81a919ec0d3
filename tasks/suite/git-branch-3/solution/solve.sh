#!/bin/bash
set -euo pipefail
cd /app
git clone -q /app/project.bundle /app/project
cd /app/project
git checkout -q -b docs
mkdir -p /app/project/docs
printf '%s\n' 'beacon by nina' > docs/guide.md
git add docs/guide.md
git -c user.name=oracle -c user.email=oracle@example.com commit -q -m 'Add docs/guide.md'
