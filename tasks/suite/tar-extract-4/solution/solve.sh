#!/bin/bash
set -euo pipefail
cd /app
mkdir -p /app/static
tar -xf /app/assets.tar.gz -C /app/static assets/docs/velvet.md
