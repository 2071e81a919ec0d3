#!/bin/bash
set -euo pipefail
cd /app
git clone -q /app/project.bundle /app/project
cd /app/project
git -c user.name=oracle -c user.email=oracle@example.com commit -q --amend -m "Fix the parser"
