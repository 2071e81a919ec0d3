#!/bin/bash
set -euo pipefail
cd /app
python3 -c "import json; d = json.load(open('/app/service.json')); print(d['owner']['team'])" > /app/value.txt
