#!/bin/bash
set -euo pipefail
cd /app
python3 -c '
import json
c = json.load(open("/app/config.json"))
c["debug"] = False
c["server"]["port"] = 9090
json.dump(c, open("/app/config.json", "w"), indent=2)
'
