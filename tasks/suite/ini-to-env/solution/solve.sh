#!/bin/bash
set -euo pipefail
cd /app
python3 -c '
section, out = "", []
for line in open("/app/app.ini"):
    line = line.strip()
    if not line or line[0] in ";#":
        continue
    if line.startswith("["):
        section = line.strip("[]").upper()
        continue
    key, value = line.split("=", 1)
    out.append(f"{section}_{key.strip().upper()}={value.strip()}")
open("/app/app.env", "w").write("\n".join(out) + "\n")
'
