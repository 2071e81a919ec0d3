"""Name the largest (or smallest) file in a folder."""
from _common import Task, WORDS, redirect_hint, tests_answer

CATEGORY = "file-operations"
WHAT = "write the name of the largest or the smallest file in a folder"


def make(i, rng):
    folder = ["uploads", "cache", "videos", "exports", "tmp", "media"][i]
    largest = i % 2 == 0
    stems = rng.sample(WORDS, 6)
    sizes = rng.sample(range(100, 5000), 6)
    files = {f"{folder}/{s}.dat": "x" * n for s, n in zip(stems, sizes)}
    pick = stems[sizes.index(max(sizes) if largest else min(sizes))] + ".dat"
    which = "largest" if largest else "smallest"
    instruction = f"""Which file in `/app/{folder}` is the {which} (in bytes)? Write just its name
(like `{stems[0]}.dat`, not a path) to `/app/{which}.txt`.{redirect_hint(f"/app/{which}.txt", i)}"""
    if i % 2 == 0:  # the file first: the model tends to answer a question and write nothing
        instruction = f"""Create the file `/app/{which}.txt` holding just the name (like
`{stems[0]}.dat`, not a path) of the {which} file (in bytes) in `/app/{folder}`.
{redirect_hint(f"/app/{which}.txt", i)}"""
    cmd = f"ls -S /app/{folder} | head -n 1" if largest else f"ls -S /app/{folder} | tail -n 1"
    return Task(instruction, files, tests_answer(f"/app/{which}.txt", pick),
                f"{cmd} > /app/{which}.txt", tags=["files", "size"])
