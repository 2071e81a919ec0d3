#!/bin/bash
set -euo pipefail
cd /app
git clone -q /app/project.bundle /app/project
cd /app/project
git checkout -q -b experiment
printf '%s\n' 'lumen by victor' > notes.txt
git add notes.txt
git -c user.name=oracle -c user.email=oracle@example.com commit -q -m 'Add notes.txt'
