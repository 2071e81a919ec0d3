#!/bin/bash
set -euo pipefail
cd /app
git clone -q /app/project.bundle /app/project
cd /app/project
git -c user.name=oracle -c user.email=oracle@example.com merge -q --no-edit origin/feature || true
printf '[app]\nname = demo\nworkers = 8\ntimeout = 60\n' > settings.conf
git add settings.conf
git -c user.name=oracle -c user.email=oracle@example.com commit -q --no-edit
