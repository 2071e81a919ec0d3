"""Count the files with one extension in a folder tree."""
from _common import Task, WORDS, redirect_hint, tests_answer

CATEGORY = "file-operations"
WHAT = "count the files with one extension in a folder (with or without its subfolders)"
EXTS = [".py", ".log", ".jpg", ".txt", ".csv", ".md"]
ROOTS = ["project", "logs", "photos", "notes", "exports", "wiki"]


def make(i, rng):
    ext, root = EXTS[i], ROOTS[i]
    files, n = {}, 0
    subs = rng.sample(WORDS, 3)
    for folder in ["", *[s + "/" for s in subs]]:
        for stem in rng.sample(WORDS, rng.randint(2, 4)):
            files[f"{root}/{folder}{stem}{ext}"] = f"{stem}\n"
        files[f"{root}/{folder}{rng.choice(WORDS)}.bin"] = "other\n"
    recursive = i % 2 == 0
    if recursive:
        count = sum(1 for p in files if p.endswith(ext))
        scope = "anywhere under it, subfolders included"
        solve = f"find /app/{root} -type f -name '*{ext}' | wc -l > /app/count.txt"
    else:
        count = sum(1 for p in files if p.endswith(ext) and p.count("/") == 1)
        scope = "directly in it (not in its subfolders)"
        solve = f"find /app/{root} -maxdepth 1 -type f -name '*{ext}' | wc -l > /app/count.txt"
    files[f"{root}/notes{ext}.orig"] = "not counted\n"
    instruction = f"""How many files whose names end in `{ext}` are in the folder `/app/{root}`,
{scope}? Write just that number to `/app/count.txt`.{redirect_hint("/app/count.txt", i)}"""
    if i % 2 == 0:  # the file first: the model tends to answer a question and write nothing
        instruction = f"""Create the file `/app/count.txt` holding just the number of files whose
names end in `{ext}` in the folder `/app/{root}`, {scope}.{redirect_hint("/app/count.txt", i)}"""
    return Task(instruction, files, tests_answer("/app/count.txt", str(count)), solve,
                tags=["files", "count"])
