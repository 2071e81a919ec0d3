#!/bin/bash
set -euo pipefail
cd /app
git clone -q /app/project.bundle /app/project
cd /app/project
git checkout -q -b hotfix
printf '%s\n' 'cloud by dave' > HOTFIX.md
git add HOTFIX.md
git -c user.name=oracle -c user.email=oracle@example.com commit -q -m 'Add HOTFIX.md'
