#!/bin/bash
set -euo pipefail
cd /app
python3 -c '
import json
events = json.load(open("/app/events.json"))
counts = {}
for e in events:
    counts[e["type"]] = counts.get(e["type"], 0) + 1
json.dump(counts, open("/app/counts.json", "w"))
'
