#!/bin/bash
set -euo pipefail
cd /app
git clone -q /app/project.bundle /app/project
cd /app/project
bad=$(git log --format=%H --grep="^Make greetings louder$" -1)
git -c user.name=oracle -c user.email=oracle@example.com revert --no-edit "$bad"
