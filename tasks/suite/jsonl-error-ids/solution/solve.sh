#!/bin/bash
set -euo pipefail
cd /app
python3 -c '
import json
ids = [str(e["id"]) for e in map(json.loads, filter(str.strip, open("/app/events.jsonl")))
       if e["service"] == "api" and e["level"] == "error"]
open("/app/error_ids.txt", "w").write("\n".join(ids) + "\n")
'
