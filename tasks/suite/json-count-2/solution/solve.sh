#!/bin/bash
set -euo pipefail
cd /app
python3 -c "import json; d = json.load(open('/app/orders.json')); print(sum(1 for x in d['items'] if x['status'] == 'shipped'))" > /app/count.txt
