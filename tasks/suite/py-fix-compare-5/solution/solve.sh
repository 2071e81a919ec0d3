#!/bin/bash
set -euo pipefail
cd /app
python3 - <<'PY'
from pathlib import Path
p = Path('/app/tickets.py')
text = p.read_text()
assert 'return age <= 12' in text
p.write_text(text.replace('return age <= 12', 'return age < 12', 1))
PY
