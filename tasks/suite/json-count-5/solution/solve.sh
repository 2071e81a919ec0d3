#!/bin/bash
set -euo pipefail
cd /app
python3 -c "import json; d = json.load(open('/app/books.json')); print(sum(1 for x in d if x['read'] == True))" > /app/count.txt
