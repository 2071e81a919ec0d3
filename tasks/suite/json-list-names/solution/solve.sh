#!/bin/bash
set -euo pipefail
cd /app
python3 -c 'import json; [print(m["name"]) for m in json.load(open("/app/team.json"))]' > /app/names.txt
