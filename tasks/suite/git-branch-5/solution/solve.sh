#!/bin/bash
set -euo pipefail
cd /app
git clone -q /app/project.bundle /app/project
cd /app/project
git checkout -q -b feature/export
printf '%s\n' 'meadow by rupert' > export.md
git add export.md
git -c user.name=oracle -c user.email=oracle@example.com commit -q -m 'Add export.md'
