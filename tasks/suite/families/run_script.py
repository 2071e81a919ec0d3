"""Run a given script and save what it prints."""
from _common import CITIES, NAMES, WORDS, Task, tests_text_equals, tests_unchanged

CATEGORY = "shell-scripting"
WHAT = "run a given script (with an argument or from another folder) and save what it prints"


def make(i, rng):
    script = ["report.py", "summary.sh", "inventory.py", "status.sh", "roster.py", "weather.sh"][i]
    items = rng.sample(NAMES if i % 2 == 0 else CITIES, 4)
    out = f"/app/{script.split('.')[0]}.txt"
    files = {}
    if script.endswith(".py"):
        arg = rng.choice(WORDS)
        files[script] = ("import sys\n\nitems = %r\nprint('report for', sys.argv[1])\n"
                         "for n, item in enumerate(items, 1):\n    print(n, item)\n" % items)
        expected = f"report for {arg}\n" + "".join(f"{n} {x}\n" for n, x in enumerate(items, 1))
        instruction = f"""Run the Python script `/app/{script}` with the argument `{arg}` (it prints a
report) and save everything it prints to `{out}`."""
        solve = f"python3 /app/{script} {arg} > {out}"
    else:
        files["tools/" + script] = ("#!/bin/bash\n# reads data.txt from the current folder\n"
                                    "echo \"lines: $(wc -l < data.txt)\"\nsort data.txt\n")
        files["tools/data.txt"] = "\n".join(items) + "\n"
        expected = f"lines: 4\n" + "".join(f"{x}\n" for x in sorted(items))
        instruction = f"""Run the script `/app/tools/{script}` and save what it prints to `{out}`.
It reads `data.txt` from the folder it runs in, so run it from `/app/tools`."""
        solve = f"cd /app/tools && bash ./{script} > {out}"
    return Task(instruction, files, tests_text_equals(out, expected)
                + tests_unchanged({f"/app/{p}": t for p, t in files.items()}), solve,
                tags=["shell", "run"], executable=tuple(p for p in files if p.endswith(".sh")))
