#!/bin/bash
set -euo pipefail
cd /app
mkdir -p /app/archive
mv /app/*.log /app/archive/
