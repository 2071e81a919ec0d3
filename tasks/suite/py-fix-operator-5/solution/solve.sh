#!/bin/bash
set -euo pipefail
cd /app
python3 - <<'PY'
from pathlib import Path
p = Path('/app/clock.py')
text = p.read_text()
assert 'return hours * 60 - minutes' in text
p.write_text(text.replace('return hours * 60 - minutes', 'return hours * 60 + minutes', 1))
PY
