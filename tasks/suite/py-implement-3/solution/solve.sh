#!/bin/bash
set -euo pipefail
cd /app
python3 - <<'PY'
from pathlib import Path
p = Path('/app/numutil.py')
text = p.read_text()
assert 'raise NotImplementedError' in text
p.write_text(text.replace('raise NotImplementedError', 'return n % 2 == 0', 1))
PY
