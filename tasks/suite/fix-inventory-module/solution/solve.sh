#!/bin/bash
set -euo pipefail
cd /app
python3 - <<'EOF'
src = open("/app/inventory.py").read()
fixes = [
    ("        self._items[sku] = [quantity, unit_price]",
     "        held = self._items.get(sku, [0, unit_price])[0]\n"
     "        self._items[sku] = [held + quantity, unit_price]"),
    ("        self._items[sku][0] -= quantity",
     "        if self._items[sku][0] < quantity:\n"
     "            raise ValueError(f\"only {self._items[sku][0]} of {sku} in stock\")\n"
     "        self._items[sku][0] -= quantity"),
    ("q * int(p)", "q * p"),
    ("return [sku for sku, (q, _) in self._items.items() if q < threshold]",
     "return sorted(sku for sku, (q, _) in self._items.items() if q <= threshold)"),
]
for old, new in fixes:
    assert old in src, old
    src = src.replace(old, new)
open("/app/inventory.py", "w").write(src)
EOF
