#!/bin/bash
set -euo pipefail
cd /app
sed -i -E 's/\b([Cc])olour\b/\1olor/g' /app/style.txt
