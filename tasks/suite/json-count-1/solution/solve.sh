#!/bin/bash
set -euo pipefail
cd /app
python3 -c "import json; d = json.load(open('/app/users.json')); print(sum(1 for x in d if x['active'] == True))" > /app/count.txt
