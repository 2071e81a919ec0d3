#!/bin/bash
set -euo pipefail
cd /app
python3 - <<'PY'
from pathlib import Path
p = Path('/app/lower.sh')
text = p.read_text()
assert 'echo "$1" | tr a-z A-Z' in text
p.write_text(text.replace('echo "$1" | tr a-z A-Z', 'echo "$1" | tr A-Z a-z', 1))
PY
