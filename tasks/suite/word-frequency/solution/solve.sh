#!/bin/bash
set -euo pipefail
cd /app
python3 - <<'EOF'
import collections, re
words = [w.lower() for w in re.findall(r"[A-Za-z]+", open("/app/article.txt").read())]
top = sorted(collections.Counter(words).items(), key=lambda kv: (-kv[1], kv[0]))[:5]
open("/app/top_words.txt", "w").write("".join(f"{w} {c}\n" for w, c in top))
EOF
