#!/bin/bash
set -euo pipefail
cd /app
python3 - <<'PY'
from pathlib import Path
p = Path('/app/server.conf')
text = p.read_text()
assert 'timeout 30\n' in text
p.write_text(text.replace('timeout 30\n', 'timeout 120\n', 1))
PY
