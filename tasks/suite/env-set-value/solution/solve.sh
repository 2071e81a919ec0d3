#!/bin/bash
set -euo pipefail
cd /app
sed -i 's/^DEBUG=true$/DEBUG=false/' /app/.env
