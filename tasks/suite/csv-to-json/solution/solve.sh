#!/bin/bash
set -euo pipefail
cd /app
python3 - <<'EOF'
import csv, json
rows = [{"id": int(r["id"]), "name": r["name"], "department": r["department"], "salary": int(r["salary"])}
        for r in csv.DictReader(open("/app/employees.csv", newline=""))]
json.dump(rows, open("/app/employees.json", "w"), indent=2)
EOF
