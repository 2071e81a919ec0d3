#!/bin/bash
set -euo pipefail
cd /app
python3 - <<'EOF'
import collections, json, math
per = collections.defaultdict(list)
for line in open("/app/requests.log"):
    f = line.split()
    if len(f) != 5 or not f[3].isdigit() or not f[4].isdigit():
        continue
    per[f[2].split("?")[0]].append((int(f[3]), int(f[4])))
out = {}
for path, rows in per.items():
    ms = sorted(m for _, m in rows)
    out[path] = {"count": len(rows), "errors": sum(1 for s, _ in rows if s >= 500),
                 "p95_ms": ms[math.ceil(0.95 * len(ms)) - 1]}
json.dump(out, open("/app/latency.json", "w"), indent=2)
EOF
