#!/bin/bash
set -euo pipefail
cd /app
cat > /app/calc.py <<'EOF'
import sys

USAGE = "usage: calc.py add|sub|mul|div A B"


def main(args):
    if len(args) != 3 or args[0] not in ("add", "sub", "mul", "div"):
        print(USAGE, file=sys.stderr)
        return 2
    try:
        a, b = int(args[1]), int(args[2])
    except ValueError:
        print(USAGE, file=sys.stderr)
        return 2
    op = args[0]
    if op == "div":
        if b == 0:
            print("error: division by zero", file=sys.stderr)
            return 1
        print(f"{a / b:.2f}")
    else:
        print({"add": a + b, "sub": a - b, "mul": a * b}[op])
    return 0


sys.exit(main(sys.argv[1:]))
EOF
