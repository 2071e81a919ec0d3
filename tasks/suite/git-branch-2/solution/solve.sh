#!/bin/bash
set -euo pipefail
cd /app
git clone -q /app/project.bundle /app/project
cd /app/project
git checkout -q -b fix-typo
printf '%s\n' 'velvet by yara' > typo.txt
git add typo.txt
git -c user.name=oracle -c user.email=oracle@example.com commit -q -m 'Add typo.txt'
