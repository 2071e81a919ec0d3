#!/bin/bash
set -euo pipefail
cd /app
mkdir -p /app/themes
tar -xf /app/theme.tar.gz -C /app/themes
