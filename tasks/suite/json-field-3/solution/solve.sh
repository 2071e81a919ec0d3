#!/bin/bash
set -euo pipefail
cd /app
python3 -c "import json; d = json.load(open('/app/user.json')); print(d['owner']['name'])" > /app/value.txt
