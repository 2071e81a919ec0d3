#!/bin/bash
set -euo pipefail
cd /app
sed -i '0,/^port = 80$/s//port = 8080/' /app/app.ini
