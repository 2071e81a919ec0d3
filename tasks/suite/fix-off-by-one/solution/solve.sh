#!/bin/bash
set -euo pipefail
cd /app
sed -i 's/start = page \* per_page/start = (page - 1) * per_page/' /app/pagination.py
