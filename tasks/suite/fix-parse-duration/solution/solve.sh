#!/bin/bash
set -euo pipefail
cd /app
cat > /app/duration.py <<'EOF'
import re

_FORM = re.compile(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?")


def parse_duration(text):
    """Seconds in a duration such as "1h30m", "45s" or "2h5s": an integer followed by a unit, for
    one or more of the units h (hours), m (minutes) and s (seconds), each at most once and in
    that order, with nothing else (no spaces). Raises ValueError for anything else, e.g. "",
    "5", "5x", "1m1h", "1h1h" or "1h 30m"."""
    match = _FORM.fullmatch(text)
    if not text or match is None:
        raise ValueError(f"not a duration: {text!r}")
    h, m, s = (int(g) if g else 0 for g in match.groups())
    return 3600 * h + 60 * m + s
EOF
