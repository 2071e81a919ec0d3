#!/bin/bash
set -euo pipefail
cd /app
python3 - <<'PY'
from pathlib import Path
p = Path('/app/.env')
text = p.read_text()
assert 'DEBUG=true\n' in text
p.write_text(text.replace('DEBUG=true\n', 'DEBUG=false\n', 1))
PY
