#!/bin/bash
set -euo pipefail
cd /app
python3 - <<'PY'
from pathlib import Path
p = Path('/app/exam.py')
text = p.read_text()
assert 'return score > 60' in text
p.write_text(text.replace('return score > 60', 'return score >= 60', 1))
PY
