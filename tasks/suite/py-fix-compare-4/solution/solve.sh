#!/bin/bash
set -euo pipefail
cd /app
python3 - <<'PY'
from pathlib import Path
p = Path('/app/stock.py')
text = p.read_text()
assert 'return units < 5' in text
p.write_text(text.replace('return units < 5', 'return units <= 5', 1))
PY
