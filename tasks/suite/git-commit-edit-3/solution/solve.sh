#!/bin/bash
set -euo pipefail
cd /app
git clone -q /app/project.bundle /app/project
python3 - <<'PY'
from pathlib import Path
p = Path('/app/project/.env')
text = p.read_text()
assert 'LOG_LEVEL=debug\n' in text
p.write_text(text.replace('LOG_LEVEL=debug\n', 'LOG_LEVEL=info\n', 1))
PY
cd /app/project
git -c user.name=oracle -c user.email=oracle@example.com commit -q -a -m 'Quieter logs'
