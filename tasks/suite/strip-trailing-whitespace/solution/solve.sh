#!/bin/bash
set -euo pipefail
cd /app
sed -i 's/[ \t]*$//' /app/greet.py
