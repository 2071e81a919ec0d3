#!/bin/bash
set -euo pipefail
cd /app
git clone -q /app/project.bundle /app/project
cd /app/project
sed -i 's/^version = 1\.0$/version = 1.1/' setup.cfg
git -c user.name=oracle -c user.email=oracle@example.com commit -q -a -m "Release 1.1"
