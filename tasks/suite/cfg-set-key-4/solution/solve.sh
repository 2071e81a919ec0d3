#!/bin/bash
set -euo pipefail
cd /app
python3 - <<'PY'
from pathlib import Path
p = Path('/app/app.ini')
text = p.read_text()
assert 'workers = 7\n' in text
p.write_text(text.replace('workers = 7\n', 'workers = 14\n', 1))
PY
