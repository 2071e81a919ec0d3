#!/bin/bash
set -euo pipefail
cd /app
python3 - <<'PY'
from pathlib import Path
p = Path('/app/service.conf')
text = p.read_text()
assert 'max_clients 400\n' in text
p.write_text(text.replace('max_clients 400\n', 'max_clients 800\n', 1))
PY
