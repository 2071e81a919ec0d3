"""List the distinct values of one log field."""
from _common import NAMES, Task, redirect_hint

CATEGORY = "log-analysis"
WHAT = "list the distinct values of one field of a log (IPs, users, status codes), sorted"


TESTS = """
import re


def test_distinct_sorted():
    found = read({out!r}).split()
    expected = {values!r}
    assert len(found) == len(set(found)), f"{out} lists a value more than once: {{found}}"
    assert set(found) == set(expected), f"{out} should list {{expected}}, found {{found}}"
    loose = sorted(found, key=lambda v: (re.sub("[^0-9A-Za-z]", "", v).lower(), v))
    assert found in (expected, loose), f"{out} is not sorted: {{found}}"
"""


def make(i, rng):
    kind = ["ip", "user", "status", "ip", "user", "path"][i]
    src = ["access.log", "auth.log", "http.log", "firewall.log", "sudo.log", "requests.log"][i]
    pool = {"ip": [f"10.0.{rng.randint(0, 9)}.{rng.randint(1, 254)}" for _ in range(6)],
            "user": rng.sample(NAMES, 5), "status": ["200", "201", "301", "404", "500"],
            "path": ["/", "/login", "/api/items", "/health", "/logout"]}[kind]
    lines = []
    for n in range(rng.randint(15, 25)):
        v = rng.choice(pool)
        stamp = f"12:{n:02d}:{rng.randint(0, 59):02d}"
        if kind == "ip":
            lines.append(f"{v} - - [{stamp}] \"GET /{rng.choice(NAMES)} HTTP/1.1\" 200")
            field, cmd = "the client IP address (the first field)", "awk '{print $1}'"
        elif kind == "user":
            lines.append(f"{stamp} login ok user={v} port={rng.randint(1000, 9999)}")
            field, cmd = "the user name (after `user=`)", "grep -o 'user=[^ ]*' | cut -d= -f2"
        elif kind == "status":
            lines.append(f"{stamp} GET /x {v} {rng.randint(1, 900)}ms")
            field, cmd = "the status code (the fourth field)", "awk '{print $4}'"
        else:
            lines.append(f"{stamp} GET {v} 200")
            field, cmd = "the requested path (the third field)", "awk '{print $3}'"
    values = sorted({{"ip": l.split()[0], "status": l.split()[3], "path": l.split()[2]}.get(kind)
                     or l.split("user=")[1].split()[0] for l in lines})
    out = f"/app/{kind}s.txt"
    instruction = f"""List every distinct value of {field} that appears in `/app/{src}`, each once, one per
line, sorted (plain `sort` order), in the file `{out}`.{redirect_hint(out, i)}"""
    return Task(instruction, {src: "\n".join(lines) + "\n"},
                TESTS.format(out=out, values=values),
                f"{cmd.split(' | ')[0]} /app/{src}" + "".join(f" | {c}" for c in cmd.split(" | ")[1:])
                + f" | LC_ALL=C sort -u > {out}", tags=["logs", "unique"])
