"""Make a branch with one commit on it, leaving main alone."""
from _common import GIT_CLONE, GIT_IDENTITY, NAMES, WORDS, Task, commit_shas

CATEGORY = "git"
WHAT = "create a branch from main, commit one new file on it, and leave main where it was"


def make(i, rng):
    branch = ["feature/login", "fix-typo", "docs", "experiment", "feature/export", "hotfix"][i]
    file = ["login.md", "typo.txt", "docs/guide.md", "notes.txt", "export.md", "HOTFIX.md"][i]
    text = f"{rng.choice(WORDS)} by {rng.choice(NAMES)}\n"
    message = f"Add {file}"
    history = [("Start", {"README.md": "# app\n"}), ("Add the code", {"app.py": "print('hi')\n"})]
    tip = commit_shas(history)[-1]
    instruction = GIT_CLONE + GIT_IDENTITY + f"""Create a branch `{branch}` from `main`. On it, add the file
`{file}` holding the line `{text.strip()}` and commit it with the message `{message}`. `main` must
stay where it is (the new commit is only on `{branch}`)."""
    tests = f'''
from judge import agent_run

REPO = "/app/project"


def git(*args):
    done = agent_run(["git", "-C", REPO, *args])
    return done.returncode, done.stdout.strip()


def test_main_unchanged():
    code, head = git("rev-parse", "refs/heads/main")
    assert code == 0 and head == {tip!r}, "main must stay at its old tip"


def test_branch_has_one_commit_on_main():
    code, parent = git("rev-parse", "refs/heads/{branch}~1")
    assert code == 0 and parent == {tip!r}, "{branch} needs exactly one commit on top of main"
    _, message = git("log", "-1", "--format=%B", "refs/heads/{branch}")
    assert message == {message!r}, f"the commit message should be {message!r}, found {{message!r}}"


def test_file_on_the_branch():
    done = agent_run(["git", "-C", REPO, "show", "refs/heads/{branch}:{file}"])
    assert done.returncode == 0 and norm(done.stdout) == norm({text!r}), \\
        f"{file} on {branch} should hold {text.strip()!r}, found {{done.stdout!r}}"
    _, changed = git("diff", "--name-only", "main", "refs/heads/{branch}")
    assert changed.split() == [{file!r}], f"the commit should add just {file}: {{changed.split()}}"
'''
    folder = f"mkdir -p /app/project/{file.rsplit('/', 1)[0]}\n" if "/" in file else ""
    solve = ("git clone -q /app/project.bundle /app/project\ncd /app/project\n"
             f"git checkout -q -b {branch}\n{folder}printf '%s\\n' '{text.strip()}' > {file}\n"
             f"git add {file}\ngit -c user.name=oracle -c user.email=oracle@example.com commit -q "
             f"-m '{message}'")
    return Task(instruction, {}, tests, solve, tags=["git", "branch"], needs="git", history=history,
                one_step=False)
