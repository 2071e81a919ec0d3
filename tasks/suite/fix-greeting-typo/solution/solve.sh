#!/bin/bash
set -euo pipefail
cd /app
sed -i 's/pritn(/print(/' /app/greet.py
