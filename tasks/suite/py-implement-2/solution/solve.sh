#!/bin/bash
set -euo pipefail
cd /app
python3 - <<'PY'
from pathlib import Path
p = Path('/app/listutil.py')
text = p.read_text()
assert 'raise NotImplementedError' in text
p.write_text(text.replace('raise NotImplementedError', 'return items[-1]', 1))
PY
