#!/bin/bash
set -euo pipefail
cd /app
python3 - <<'EOF'
import re
seen, rows = set(), []
for line in open("/app/contacts.txt"):
    line = line.strip()
    if not line or line.startswith("#"):
        continue
    name, email = re.match(r"(.*?)\s*<([^>]+)>", line).groups()
    email = email.strip().lower()
    if email not in seen:
        seen.add(email)
        rows.append((" ".join(w.capitalize() for w in name.split()), email))
rows.sort(key=lambda r: r[1])
with open("/app/contacts.csv", "w") as out:
    out.write("name,email\n" + "".join(f"{n},{e}\n" for n, e in rows))
EOF
