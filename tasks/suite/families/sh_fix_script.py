"""Fix a one-line mistake in a bash script."""
from _common import NAMES, Task, solve_replace, tests_script

CATEGORY = "shell-scripting"
WHAT = "fix the one wrong line in a short bash script (a wrong argument, operator or quote)"
CASES = [
    ("welcome.sh", 'echo "Welcome, $2!"', 'echo "Welcome, $1!"',
     lambda a, b: [([a], f"Welcome, {a}!"), ([b, a], f"Welcome, {b}!")],
     "prints `Welcome, NAME!` for its first argument NAME, but prints the wrong thing"),
    ("double.sh", "echo $(( $1 + 2 ))", "echo $(( $1 * 2 ))",
     lambda a, b: [(["4"], "8"), (["10"], "20"), (["0"], "0")],
     "should print twice its number argument (`double.sh 4` prints `8`) but does not"),
    ("lines.sh", "wc -l $1", "wc -l < \"$1\"",
     lambda a, b: [(["/app/data/a.txt"], "3"), (["/app/data/my notes.txt"], "2")],
     "should print just the number of lines of the file named by its argument (digits only, "
     "no file name), and must work for names with spaces"),
    ("lower.sh", "echo \"$1\" | tr a-z A-Z", "echo \"$1\" | tr A-Z a-z",
     lambda a, b: [([a.upper()], a), (["MiXeD"], "mixed")],
     "should print its argument in lower case but does not"),
    ("last.sh", 'echo "$1"', 'echo "${@: -1}"',
     lambda a, b: [([a, b], b), ([b], b), (["x", "y", "z"], "z")],
     "should print its last argument (`last.sh a b c` prints `c`) but does not"),
    ("stamp.sh", "echo \"[$1] \"$2", "echo \"[$1] $2\"",
     lambda a, b: [(["INFO", a], f"[INFO] {a}"), (["WARN", "disk  full"], "[WARN] disk  full")],
     "should print `[LEVEL] MESSAGE` from its two arguments, keeping the message exactly as given "
     "(spaces inside it too)"),
]


def make(i, rng):
    name, bad, good, cases, what = CASES[i]
    a, b = rng.sample(NAMES, 2)
    files = {name: f"#!/bin/bash\n# {name}\n{bad}\n"}
    if name == "lines.sh":
        files["data/a.txt"] = "one\ntwo\nthree\n"
        files["data/my notes.txt"] = "first\nsecond\n"
    run = rng.choice(["Run it", "Try it"])
    instruction = f"""The script `/app/{name}` {what}. {run} and fix it. It must stay an executable
bash script at `/app/{name}`."""
    return Task(instruction, files, tests_script(f"/app/{name}", cases(a, b)),
                solve_replace(f"/app/{name}", bad, good), tags=["shell", "bugfix"],
                executable=(name,))
