#!/bin/bash
set -euo pipefail
cd /app
git clone -q /app/project.bundle /app/project
cd /app/project
git checkout -q -b feature/login
printf '%s\n' 'solar by rupert' > login.md
git add login.md
git -c user.name=oracle -c user.email=oracle@example.com commit -q -m 'Add login.md'
