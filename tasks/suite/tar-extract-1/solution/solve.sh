#!/bin/bash
set -euo pipefail
cd /app
mkdir -p /app/unpacked
tar -xf /app/release.tar.gz -C /app/unpacked
