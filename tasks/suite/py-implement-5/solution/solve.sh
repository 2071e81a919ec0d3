#!/bin/bash
set -euo pipefail
cd /app
python3 - <<'PY'
from pathlib import Path
p = Path('/app/mathutil.py')
text = p.read_text()
assert 'raise NotImplementedError' in text
p.write_text(text.replace('raise NotImplementedError', 'return max(lo, min(hi, x))', 1))
PY
