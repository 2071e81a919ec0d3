#!/bin/bash
set -euo pipefail
cd /app
python3 - <<'PY'
from pathlib import Path
p = Path('/app/settings.ini')
text = p.read_text()
assert 'port = 5865\n' in text
p.write_text(text.replace('port = 5865\n', 'port = 5875\n', 1))
PY
