#!/bin/bash
set -euo pipefail
cd /app
python3 - <<'PY'
from pathlib import Path
p = Path('/app/money.py')
text = p.read_text()
assert 'return price ** qty' in text
p.write_text(text.replace('return price ** qty', 'return price * qty', 1))
PY
