#!/bin/bash
set -euo pipefail
cd /app
python3 - <<'EOF'
import csv, json
names = {r["customer_id"]: r["name"] for r in csv.DictReader(open("/app/customers.csv"))}
agg = {c: [0, 0.0] for c in names}
for r in csv.DictReader(open("/app/orders.csv")):
    if r["status"].strip().lower() == "paid":
        agg[r["customer_id"]][0] += 1
        agg[r["customer_id"]][1] += float(r["amount"])
rows = [{"customer_id": c, "name": names[c], "orders": n, "total": round(t, 2)} for c, (n, t) in agg.items()]
rows.sort(key=lambda r: (-r["total"], r["customer_id"]))
json.dump({"customers": rows, "grand_total": round(sum(r["total"] for r in rows), 2)},
          open("/app/report.json", "w"), indent=2)
EOF
