"""Compile a small C program to a named path."""
from _common import NAMES, Task

CATEGORY = "config-build"
WHAT = "compile a small C program (one or two source files) with gcc into a given path"


def make(i, rng):
    prog = ["hello", "greet", "sum", "count", "banner", "square"][i]
    who = rng.choice(NAMES)
    two_files = i % 2 == 1
    out_dir = ["bin", "build", "out", "bin", "dist", "build"][i]
    if prog in ("hello", "greet", "banner"):
        message = {"hello": f"Hello from {who}", "greet": f"Hi {who}",
                   "banner": f"*** {who} ***"}[prog]
        body = f'    puts("{message}");\n'
        expected = message
    elif prog == "sum":
        a, b = rng.randint(10, 99), rng.randint(10, 99)
        body, expected = f'    printf("%d\\n", {a} + {b});\n', str(a + b)
    elif prog == "count":
        n = rng.randint(3, 6)
        body = f'    for (int i = 1; i <= {n}; i++) printf("%d\\n", i);\n'
        expected = "\n".join(str(k) for k in range(1, n + 1))
    else:
        x = rng.randint(3, 30)
        body, expected = f'    printf("%d\\n", {x} * {x});\n', str(x * x)
    if two_files:
        files = {f"src/main.c": f'#include "run.h"\n\nint main(void) {{\n    run();\n    return 0;\n}}\n',
                 "src/run.h": "void run(void);\n",
                 "src/run.c": f'#include <stdio.h>\n#include "run.h"\n\nvoid run(void) {{\n{body}}}\n'}
        sources, cmd_src = "`/app/src/main.c` and `/app/src/run.c` (both are needed)", \
            "/app/src/main.c /app/src/run.c"
    else:
        files = {f"src/{prog}.c": f"#include <stdio.h>\n\nint main(void) {{\n{body}    return 0;\n}}\n"}
        sources, cmd_src = f"`/app/src/{prog}.c`", f"/app/src/{prog}.c"
    target = f"/app/{out_dir}/{prog}"
    instruction = f"""Compile the C program in {sources} with `gcc` into the executable
`{target}` (the folder `/app/{out_dir}` does not exist yet)."""
    tests = f'''
import os

from judge import agent_run


def test_program_runs():
    assert Path({target!r}).is_file(), "{target} does not exist"
    assert os.access({target!r}, os.X_OK), "{target} is not executable"
    done = agent_run([{target!r}])
    assert done.returncode == 0, f"{target} exited with {{done.returncode}}"
    assert norm(done.stdout) == norm({expected!r}), f"{target} printed {{done.stdout!r}}, expected {expected!r}"
'''
    return Task(instruction, files, tests,
                f"mkdir -p /app/{out_dir}\ngcc -o {target} {cmd_src}", tags=["c", "gcc"],
                needs="gcc")
