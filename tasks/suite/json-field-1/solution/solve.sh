#!/bin/bash
set -euo pipefail
cd /app
python3 -c "import json; d = json.load(open('/app/package.json')); print(d['version'])" > /app/value.txt
