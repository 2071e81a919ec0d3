#!/bin/bash
set -euo pipefail
cd /app
git clone -q /app/project.bundle /app/project
python3 - <<'PY'
from pathlib import Path
p = Path('/app/project/settings.toml')
text = p.read_text()
assert 'timeout = 30\n' in text
p.write_text(text.replace('timeout = 30\n', 'timeout = 60\n', 1))
PY
cd /app/project
git -c user.name=oracle -c user.email=oracle@example.com commit -q -a -m 'Longer timeout'
