#!/bin/bash
set -euo pipefail
cd /app
chmod +x /app/ci/*.sh
