#!/bin/bash
set -euo pipefail
cd /app
git clone -q /app/project.bundle /app/project
cd /app/project
first=$(git rev-list --max-parents=0 HEAD)
git bisect start HEAD "$first" > /dev/null
git bisect run python3 check.py > /tmp/bisect.log 2>&1
git rev-parse refs/bisect/bad > /app/bad_commit.txt
git bisect reset > /dev/null 2>&1
