#!/bin/bash
set -euo pipefail
cd /app
python3 -c "import json; p = '/app/server.json'; d = json.load(open(p)); d['log_level'] = 'warning'; json.dump(d, open(p, 'w'), indent=2)"
