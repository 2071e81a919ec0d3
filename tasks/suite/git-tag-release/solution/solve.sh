#!/bin/bash
set -euo pipefail
cd /app
git clone -q /app/project.bundle /app/project
cd /app/project
target=$(git log --format=%H --grep="^Prepare 1.0 release$" -1)
git -c user.name=oracle -c user.email=oracle@example.com tag -a v1.0 -m "Release 1.0" "$target"
