#!/bin/bash
set -euo pipefail
cd /app
sed -i 's/return len(text.split(" "))/return len(text.split())/' /app/textstats.py
