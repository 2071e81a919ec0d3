#!/bin/bash
set -euo pipefail
cd /app
git clone -q /app/project.bundle /app/project
git -C /app/project log --format=%H --grep='Fix the login bug' > /app/commit.txt
