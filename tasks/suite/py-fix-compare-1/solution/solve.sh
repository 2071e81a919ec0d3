#!/bin/bash
set -euo pipefail
cd /app
python3 - <<'PY'
from pathlib import Path
p = Path('/app/rules.py')
text = p.read_text()
assert 'return age > 18' in text
p.write_text(text.replace('return age > 18', 'return age >= 18', 1))
PY
