#!/bin/bash
set -euo pipefail
cd /app
git clone -q /app/project.bundle /app/project
python3 - <<'PY'
from pathlib import Path
p = Path('/app/project/config.ini')
text = p.read_text()
assert 'port = 8080\n' in text
p.write_text(text.replace('port = 8080\n', 'port = 9090\n', 1))
PY
cd /app/project
git -c user.name=oracle -c user.email=oracle@example.com commit -q -a -m 'Move to port 9090'
