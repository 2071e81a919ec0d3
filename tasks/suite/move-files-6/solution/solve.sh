#!/bin/bash
set -euo pipefail
cd /app
mkdir -p /app/images
mv /app/uploads/img_* /app/images/
