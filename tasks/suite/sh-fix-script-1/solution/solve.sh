#!/bin/bash
set -euo pipefail
cd /app
python3 - <<'PY'
from pathlib import Path
p = Path('/app/welcome.sh')
text = p.read_text()
assert 'echo "Welcome, $2!"' in text
p.write_text(text.replace('echo "Welcome, $2!"', 'echo "Welcome, $1!"', 1))
PY
