#!/bin/bash
set -euo pipefail
cd /app
mkdir -p /app/keep
cp /app/data/*.csv /app/keep/
