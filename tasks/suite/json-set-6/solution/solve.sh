#!/bin/bash
set -euo pipefail
cd /app
python3 -c "import json; p = '/app/client.json'; d = json.load(open(p)); d['cache']['ttl'] = 3600; json.dump(d, open(p, 'w'), indent=2)"
