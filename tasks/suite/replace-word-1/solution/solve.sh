#!/bin/bash
set -euo pipefail
cd /app
sed -i 's/colour/color/g' /app/style.txt
