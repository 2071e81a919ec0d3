#!/bin/bash
set -euo pipefail
cd /app
git clone -q /app/project.bundle /app/project
python3 - <<'PY'
from pathlib import Path
p = Path('/app/project/VERSION')
text = p.read_text()
assert '2.3.0\n' in text
p.write_text(text.replace('2.3.0\n', '2.4.0\n', 1))
PY
cd /app/project
git -c user.name=oracle -c user.email=oracle@example.com commit -q -a -m 'Bump to 2.4.0'
