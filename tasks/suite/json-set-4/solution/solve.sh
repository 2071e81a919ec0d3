#!/bin/bash
set -euo pipefail
cd /app
python3 -c "import json; p = '/app/feature_flags.json'; d = json.load(open(p)); d['cache']['enabled'] = True; json.dump(d, open(p, 'w'), indent=2)"
