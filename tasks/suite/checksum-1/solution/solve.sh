#!/bin/bash
set -euo pipefail
cd /app
sha256sum /app/solar-9.zip | cut -d' ' -f1 > /app/solar-9.zip.sha256
