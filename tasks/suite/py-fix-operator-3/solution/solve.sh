#!/bin/bash
set -euo pipefail
cd /app
python3 - <<'PY'
from pathlib import Path
p = Path('/app/temps.py')
text = p.read_text()
assert 'return low - high' in text
p.write_text(text.replace('return low - high', 'return high - low', 1))
PY
