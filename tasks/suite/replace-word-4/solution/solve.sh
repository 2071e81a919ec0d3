#!/bin/bash
set -euo pipefail
cd /app
sed -i 's/\bv1\b/v2/g' /app/api.md
