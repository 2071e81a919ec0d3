"""Write a tiny executable bash script."""
from _common import NAMES, Task, tests_script

CATEGORY = "shell-scripting"
WHAT = "write a tiny bash script that prints something from its arguments, and make it executable"


def make(i, rng):
    name = ["hello.sh", "first.sh", "shout.sh", "add.sh", "count.sh", "greet.sh"][i]
    a, b = rng.sample(NAMES, 2)
    if i in (0, 5):
        word = ["Hello", "Welcome"][i // 5]
        spec = f"prints `{word}, NAME!` where NAME is its first argument (`{name} {a}` prints `{word}, {a}!`)"
        cases = [([a], f"{word}, {a}!"), ([b], f"{word}, {b}!"), (["Mary Ann"], f"{word}, Mary Ann!")]
        body = f'echo "{word}, $1!"'
    elif i == 1:
        spec = f"prints its first argument and nothing else (`{name} {a} {b}` prints `{a}`)"
        cases = [([a, b], a), ([b], b), (["x y", "z"], "x y")]
        body = 'echo "$1"'
    elif i == 2:
        spec = f"prints its first argument in upper case (`{name} {a}` prints `{a.upper()}`)"
        cases = [([a], a.upper()), ([b], b.upper()), (["mixed Case"], "MIXED CASE")]
        body = 'echo "$1" | tr a-z A-Z'
    elif i == 3:
        x, y = rng.randint(2, 50), rng.randint(2, 50)
        spec = f"prints the sum of its two whole-number arguments (`{name} {x} {y}` prints `{x + y}`)"
        cases = [([str(x), str(y)], str(x + y)), (["0", "0"], "0"), (["10", "-3"], "7")]
        body = 'echo $(( $1 + $2 ))'
    else:
        spec = f"prints how many arguments it was given (`{name} {a} {b}` prints `2`)"
        cases = [([a, b], "2"), ([], "0"), (["one two"], "1")]
        body = 'echo "$#"'
    instruction = f"""Write a bash script `/app/{name}` that {spec}. Make it executable, so that
`/app/{name} ...` runs it.{f" The script is two lines: `#!/bin/bash` and the command." if i % 2 == 0 else ""}"""
    solve = f"printf '%s\\n' '#!/bin/bash' '{body}' > /app/{name}\nchmod +x /app/{name}"
    return Task(instruction, {"README.md": "Scripts for the team live here.\n"},
                tests_script(f"/app/{name}", cases), solve, tags=["shell", "script"])
