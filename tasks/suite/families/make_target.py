"""Run or extend a Makefile."""
from _common import WORDS, Task, tests_text_equals

CATEGORY = "config-build"
WHAT = "add a one-line target to a Makefile (its recipe indented with a tab)"


APPEND_HINT = (" Append the new target's two lines to the end of the Makefile; do not replace the "
               "file.")


def make(i, rng):
    target = ["notes", "hello", "version", "docs", "stamp", "list"][i]
    word = rng.choice(WORDS)
    out = f"{target}.txt"
    recipe = f"echo {word} > {out}"
    makefile = ("all: app.txt\n\napp.txt: app.src\n\tcp app.src app.txt\n")
    instruction = f"""Add a target `{target}` to `/app/Makefile` whose recipe runs the command
`{recipe}`, so that `make {target}` in `/app` writes `/app/{out}`. Keep the existing targets
working. Recipe lines in a Makefile start with a tab character.{APPEND_HINT if i % 2 == 0 else ""}"""
    tests = f'''
from judge import agent_run


def test_target_works():
    Path("/app/{out}").unlink(missing_ok=True)
    done = agent_run(["make", "-C", "/app", {target!r}])
    assert done.returncode == 0, f"make {target} failed: {{done.stderr[-400:]}}"
    assert norm(read("/app/{out}")) == {word!r}, "make {target} should write {word} to /app/{out}"


def test_default_target_still_works():
    Path("/app/app.txt").unlink(missing_ok=True)
    done = agent_run(["make", "-C", "/app"])
    assert done.returncode == 0, f"make failed: {{done.stderr[-400:]}}"
    assert read("/app/app.txt") == "source\\n"
'''
    return Task(instruction, {"Makefile": makefile, "app.src": "source\n"}, tests,
                f"printf '\\n{target}:\\n\\t{recipe}\\n' >> /app/Makefile", tags=["make"],
                needs="make")
