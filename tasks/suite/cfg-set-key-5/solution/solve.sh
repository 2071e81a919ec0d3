#!/bin/bash
set -euo pipefail
cd /app
python3 - <<'PY'
from pathlib import Path
p = Path('/app/prod.env')
text = p.read_text()
assert 'LOG_LEVEL=debug\n' in text
p.write_text(text.replace('LOG_LEVEL=debug\n', 'LOG_LEVEL=warn\n', 1))
PY
