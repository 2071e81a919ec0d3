#!/bin/bash
set -euo pipefail
cd /app
python3 - <<'PY'
from pathlib import Path
p = Path('/app/shipping.py')
text = p.read_text()
assert 'return total > 50' in text
p.write_text(text.replace('return total > 50', 'return total >= 50', 1))
PY
