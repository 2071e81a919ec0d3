#!/bin/bash
set -euo pipefail
cd /app
sed -i '/^logging:$/,/^[^ ]/s/^  level: debug$/  level: info/' /app/config.yaml
