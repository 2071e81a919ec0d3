#!/bin/bash
set -euo pipefail
cd /app
git clone -q /app/project.bundle /app/project
cd /app/project
printf '2.0.0\n' > VERSION
git add VERSION
git -c user.name=oracle -c user.email=oracle@example.com commit -q -m "Bump version to 2.0.0"
