#!/bin/bash
set -euo pipefail
cd /app
mkdir -p /app/archive
mv /app/inbox/2023-* /app/archive/
