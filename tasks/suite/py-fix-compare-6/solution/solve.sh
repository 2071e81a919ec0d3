#!/bin/bash
set -euo pipefail
cd /app
python3 - <<'PY'
from pathlib import Path
p = Path('/app/battery.py')
text = p.read_text()
assert 'return percent < 20' in text
p.write_text(text.replace('return percent < 20', 'return percent <= 20', 1))
PY
