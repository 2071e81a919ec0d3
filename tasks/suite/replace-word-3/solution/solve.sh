#!/bin/bash
set -euo pipefail
cd /app
sed -i 's/staging/production/g' /app/deploy.cfg
