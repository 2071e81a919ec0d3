#!/bin/bash
set -euo pipefail
cd /app
python3 - <<'EOF'
src = open("/app/stats.py").read()
body_start = src.index("    n = len(values)")
fixed = src[:body_start] + (
    "    if not values:\n"
    "        raise ValueError(\"median of an empty sequence\")\n"
    "    ordered = sorted(values)\n"
    "    n = len(ordered)\n"
    "    mid = n // 2\n"
    "    if n % 2:\n"
    "        return ordered[mid]\n"
    "    return (ordered[mid - 1] + ordered[mid]) / 2\n")
open("/app/stats.py", "w").write(fixed)
EOF
