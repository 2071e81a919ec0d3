#!/bin/bash
set -euo pipefail
cd /app
mkdir -p /app/snapshot
cp /app/docs/*.md /app/snapshot/
