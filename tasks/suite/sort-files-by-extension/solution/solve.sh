#!/bin/bash
set -euo pipefail
cd /app
python3 - <<'EOF'
from pathlib import Path
for f in sorted(Path("/app/inbox").iterdir()):
    ext = f.name.rsplit(".", 1)[1].lower() if "." in f.name else "noext"
    dest = Path("/app/sorted") / ext
    dest.mkdir(parents=True, exist_ok=True)
    f.rename(dest / f.name)
EOF
