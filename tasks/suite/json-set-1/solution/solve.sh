#!/bin/bash
set -euo pipefail
cd /app
python3 -c "import json; p = '/app/settings.json'; d = json.load(open(p)); d['port'] = 9978; json.dump(d, open(p, 'w'), indent=2)"
