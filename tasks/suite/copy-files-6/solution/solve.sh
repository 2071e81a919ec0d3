#!/bin/bash
set -euo pipefail
cd /app
mkdir -p /app/backup
cp /app/settings/*.yaml /app/backup/
