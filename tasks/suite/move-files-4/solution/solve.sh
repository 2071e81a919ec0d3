#!/bin/bash
set -euo pipefail
cd /app
mkdir -p /app/holding
mv /app/scratch/tmp_* /app/holding/
