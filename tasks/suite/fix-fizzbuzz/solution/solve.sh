#!/bin/bash
set -euo pipefail
cd /app
python3 - <<'EOF'
path = "/app/fizzbuzz.py"
src = open(path).read()
start = src.index("    out = []")
open(path, "w").write(src[:start] + """    out = []
    for i in range(1, n + 1):
        if i % 15 == 0:
            out.append("FizzBuzz")
        elif i % 3 == 0:
            out.append("Fizz")
        elif i % 5 == 0:
            out.append("Buzz")
        else:
            out.append(str(i))
    return out
""")
EOF
