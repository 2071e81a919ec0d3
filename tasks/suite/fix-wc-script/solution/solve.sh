#!/bin/bash
set -euo pipefail
cd /app
python3 - <<'EOF'
path = "/app/wc.py"
src = open(path).read()
start = src.index("def main(paths):")
open(path, "w").write(src[:start] + """def main(paths):
    totals, status = [0, 0, 0], 0
    for path in paths:
        try:
            data = open(path, "rb").read()
        except OSError:
            print(f"wc.py: {path}: cannot read", file=sys.stderr)
            status = 1
            continue
        counts = [data.count(b"\\n"), len(data.split()), len(data)]
        print(*counts, path)
        totals = [t + c for t, c in zip(totals, counts)]
    if len(paths) > 1:
        print(*totals, "total")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
""")
EOF
