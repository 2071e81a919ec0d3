#!/bin/bash
set -euo pipefail
cd /app
python3 - <<'PY'
from pathlib import Path
p = Path('/app/double.sh')
text = p.read_text()
assert 'echo $(( $1 + 2 ))' in text
p.write_text(text.replace('echo $(( $1 + 2 ))', 'echo $(( $1 * 2 ))', 1))
PY
