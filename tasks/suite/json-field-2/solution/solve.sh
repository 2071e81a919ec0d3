#!/bin/bash
set -euo pipefail
cd /app
python3 -c "import json; d = json.load(open('/app/config.json')); print(d['database']['port'])" > /app/value.txt
