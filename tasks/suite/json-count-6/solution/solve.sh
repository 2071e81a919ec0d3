#!/bin/bash
set -euo pipefail
cd /app
python3 -c "import json; d = json.load(open('/app/hosts.json')); print(sum(1 for x in d['items'] if x['env'] == 'prod'))" > /app/count.txt
