"""Put a folder under git with one first commit."""
from _common import WORDS, Task

CATEGORY = "git"
WHAT = ("make a folder a git repository and commit its files as its first commit (some leave one "
        "file out with a .gitignore)")


def make(i, rng):
    folder = ["website", "scripts", "notes", "dotfiles", "recipes", "homework"][i]
    message = ["Initial commit", "First version", "Start the project", "Import files",
               "Add the first files", "Initial import"][i]
    stems = rng.sample(WORDS, 3)
    files = {f"{folder}/{s}.txt": f"{s} {rng.randint(1, 99)}\n" for s in stems}
    files[f"{folder}/README.md"] = f"# {folder}\n"
    leave = None
    if i % 2:
        leave = [".env", "secrets.txt", "debug.log"][i // 2]
        files[f"{folder}/{leave}"] = "TOKEN=do-not-commit\n"
    tracked = sorted(p.split("/", 1)[1] for p in files if not leave or not p.endswith("/" + leave))
    extra = (f" Do not commit `{leave}`: leave it untracked, and add a `.gitignore` holding the line "
             f"`{leave}` to the commit so it stays out.") if leave else " Commit every file in it."
    instruction = f"""Make `/app/{folder}` a git repository (branch `main`) and commit its files as
one first commit with the message `{message}`.{extra} If git asks who you are when you commit, run
`git config user.name agent` and `git config user.email agent@example.com` inside `/app/{folder}`
after `git init`."""
    if leave:
        tracked = sorted(tracked + [".gitignore"])
    tests = f'''
from judge import agent_run

REPO = "/app/{folder}"


def git(*args):
    done = agent_run(["git", "-C", REPO, *args])
    return done.returncode, done.stdout.strip()


def test_repository():
    assert Path(REPO, ".git").is_dir(), "/app/{folder} is not a git repository (git init)"


def test_one_commit_with_the_message():
    code, count = git("rev-list", "--count", "HEAD")
    assert code == 0 and count == "1", f"expected exactly one commit, found {{count!r}}"
    _, message = git("log", "-1", "--format=%B")
    assert message == {message!r}, f"the commit message should be {message!r}, found {{message!r}}"


def test_tracked_files():
    _, files = git("ls-files")
    assert sorted(files.split("\\n")) == {tracked!r}, f"the commit holds {{files.split()}}"


def test_nothing_left_to_commit():
    _, status = git("status", "--porcelain")
    assert status == "", f"uncommitted changes left:\\n{{status}}"
'''
    ignore = f"echo '{leave}' > .gitignore\n" if leave else ""
    solve = (f"cd /app/{folder}\ngit init -q -b main\n{ignore}git add -A\n"
             f"git -c user.name=oracle -c user.email=oracle@example.com commit -q -m '{message}'")
    return Task(instruction, files, tests, solve, tags=["git", "init"], needs="git")
