#!/bin/bash
set -euo pipefail
cd /app
python3 -c '
import csv, json
users = json.load(open("/app/users.json"))
with open("/app/users.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["id", "name", "email"])
    for u in users:
        w.writerow([u["id"], u["name"], u.get("email", "")])
'
