#!/bin/bash
set -euo pipefail
cd /app
python3 -c "import json; d = json.load(open('/app/deploy.json')); print(d['name'])" > /app/value.txt
