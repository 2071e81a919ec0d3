#!/bin/bash
set -euo pipefail
cd /app
git clone -q /app/project.bundle /app/project
python3 - <<'PY'
from pathlib import Path
p = Path('/app/project/app.conf')
text = p.read_text()
assert 'workers = 2\n' in text
p.write_text(text.replace('workers = 2\n', 'workers = 4\n', 1))
PY
cd /app/project
git -c user.name=oracle -c user.email=oracle@example.com commit -q -a -m 'More workers'
