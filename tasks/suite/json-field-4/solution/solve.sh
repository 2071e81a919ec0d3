#!/bin/bash
set -euo pipefail
cd /app
python3 -c "import json; d = json.load(open('/app/release.json')); print(d['database']['host'])" > /app/value.txt
