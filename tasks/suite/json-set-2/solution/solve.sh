#!/bin/bash
set -euo pipefail
cd /app
python3 -c "import json; p = '/app/app.json'; d = json.load(open(p)); d['debug'] = False; json.dump(d, open(p, 'w'), indent=2)"
