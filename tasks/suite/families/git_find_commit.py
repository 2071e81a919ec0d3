"""Find a commit by its message and write its hash."""
from _common import GIT_CLONE, WORDS, Task, commit_shas

CATEGORY = "git"
WHAT = "find the commit whose message mentions something and write its full hash"
TOPICS = ["login bug", "typo in README", "memory leak", "slow query", "broken link", "crash on start"]


def make(i, rng):
    topic = TOPICS[i]
    words = rng.sample(WORDS, 6)
    messages = [f"Add {w}" for w in words[:5]]
    target = rng.randrange(1, 4)
    messages.insert(target, f"Fix the {topic}")
    if i % 2:  # a later commit only mentions the topic without fixing it
        messages.insert(target + 2, f"Add a test for the {topic}")
    history = [(m, {f"{n}.txt": f"{m}\n"}) for n, m in enumerate(messages)]
    sha = commit_shas(history)[messages.index(f"Fix the {topic}")]
    instruction = GIT_CLONE + f"""One commit on `main` fixed the {topic}; its message says
"Fix the {topic}". Write its full 40-character commit hash to `/app/commit.txt`."""
    tests = f'''

def test_commit_hash():
    found = read("/app/commit.txt").strip()
    assert found == {sha!r}, f"/app/commit.txt should hold the full hash of the fix, found {{found!r}}"
'''
    solve = ("git clone -q /app/project.bundle /app/project\n"
             f"git -C /app/project log --format=%H --grep='Fix the {topic}' > /app/commit.txt")
    return Task(instruction, {}, tests, solve, tags=["git", "log"], needs="git", history=history)
