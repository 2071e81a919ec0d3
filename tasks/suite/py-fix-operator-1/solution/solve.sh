#!/bin/bash
set -euo pipefail
cd /app
python3 - <<'PY'
from pathlib import Path
p = Path('/app/geometry.py')
text = p.read_text()
assert 'return width + height' in text
p.write_text(text.replace('return width + height', 'return width * height', 1))
PY
