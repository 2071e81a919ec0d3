#!/bin/bash
set -euo pipefail
cd /app
python3 - <<'EOF'
merged = {}
for name in ("/app/defaults.env", "/app/local.env"):
    for line in open(name):
        line = line.strip()
        if line and not line.startswith("#"):
            key, value = line.split("=", 1)
            merged[key.strip()] = value.strip()
open("/app/merged.env", "w").write("".join(f"{k}={v}\n" for k, v in merged.items()))
EOF
