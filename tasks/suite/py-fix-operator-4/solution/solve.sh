#!/bin/bash
set -euo pipefail
cd /app
python3 - <<'PY'
from pathlib import Path
p = Path('/app/stats.py')
text = p.read_text()
assert 'return a + b / 2' in text
p.write_text(text.replace('return a + b / 2', 'return (a + b) / 2', 1))
PY
