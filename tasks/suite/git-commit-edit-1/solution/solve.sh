#!/bin/bash
set -euo pipefail
cd /app
git clone -q /app/project.bundle /app/project
python3 - <<'PY'
from pathlib import Path
p = Path('/app/project/setup.cfg')
text = p.read_text()
assert 'version = 1.0\n' in text
p.write_text(text.replace('version = 1.0\n', 'version = 1.1\n', 1))
PY
cd /app/project
git -c user.name=oracle -c user.email=oracle@example.com commit -q -a -m 'Release 1.1'
