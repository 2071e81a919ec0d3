"""Change one line in a cloned repository and commit it."""
from _common import GIT_CLONE, GIT_IDENTITY, SERVICES, Task, commit_shas, solve_replace

CATEGORY = "git"
WHAT = "clone a repository, change one line of a file and commit it with a given message"


def make(i, rng):
    name = rng.choice(SERVICES)
    file, key = [("setup.cfg", "version"), ("config.ini", "port"), (".env", "LOG_LEVEL"),
                 ("VERSION", None), ("settings.toml", "timeout"), ("app.conf", "workers")][i]
    old, new = [("1.0", "1.1"), ("8080", "9090"), ("debug", "info"), ("2.3.0", "2.4.0"),
                ("30", "60"), ("2", "4")][i]
    sep = "=" if file == ".env" else " = "
    line = f"{key}{sep}{old}" if key else old
    newline = f"{key}{sep}{new}" if key else new
    body = (f"[main]\nname{sep}{name}\n{line}\n" if key else f"{line}\n")
    if i % 2 and key:  # the same value on another key must stay
        body += f"other{sep}{old}\n"
    history = [("Add the project", {"README.md": f"# {name}\n", file: body}),
               ("Describe the project", {"README.md": f"# {name}\n\nThe {name} service.\n"})]
    tip = commit_shas(history)[-1]
    message = [f"Release {new}", f"Move to port {new}", "Quieter logs", f"Bump to {new}",
               "Longer timeout", "More workers"][i]
    where = f"the line `{line}` to `{newline}`" if key else f"its content `{old}` to `{new}`"
    expected = body.replace(line + "\n", newline + "\n", 1)
    instruction = GIT_CLONE + GIT_IDENTITY + f"""In `{file}`, change {where}, and commit that change on `main` as
one new commit with the message `{message}`. Nothing else changes. Leave no uncommitted changes."""
    tests = f'''
from judge import agent_run

REPO = Path("/app/project")


def git(*args):
    done = agent_run(["git", "-C", str(REPO), *args])
    return done.returncode, done.stdout.strip()


def test_cloned():
    assert (REPO / ".git").is_dir(), "/app/project is not a clone of /app/project.bundle"


def test_new_commit_on_the_old_tip():
    code, parent = git("rev-parse", "main~1")
    assert code == 0 and parent == {tip!r}, "main needs one new commit on top of the old tip"


def test_message():
    _, message = git("log", "-1", "--format=%B", "main")
    assert message == {message!r}, f"the commit message should be {message!r}, found {{message!r}}"


def test_file_in_the_commit():
    done = agent_run(["git", "-C", str(REPO), "show", "main:{file}"])
    assert done.returncode == 0 and norm(done.stdout) == norm({expected!r}), \\
        f"{file} in the new commit should be {expected!r}, found {{done.stdout!r}}"


def test_only_that_file_changed():
    _, changed = git("diff", "--name-only", "main~1", "main")
    assert changed.split() == [{file!r}], f"the commit should change just {file}: {{changed.split()}}"


def test_clean():
    _, status = git("status", "--porcelain")
    assert status == "", f"uncommitted changes left:\\n{{status}}"
'''
    solve = ("git clone -q /app/project.bundle /app/project\n"
             + solve_replace(f"/app/project/{file}", line + "\n", newline + "\n")
             + f"\ncd /app/project\ngit -c user.name=oracle -c user.email=oracle@example.com "
               f"commit -q -a -m '{message}'")
    return Task(instruction, {}, tests, solve, tags=["git", "commit"], needs="git", history=history,
                one_step=False)
