"""Rename every file with one extension to another."""
from _common import WORDS, Task, tests_folder_holds

CATEGORY = "file-operations"
WHAT = "rename every file with one extension in a folder to another extension"
PAIRS = [(".txt", ".md"), (".jpeg", ".jpg"), (".htm", ".html"), (".yml", ".yaml"),
         (".text", ".txt"), (".markdown", ".md")]
FOLDERS = ["notes", "pictures", "site", "config", "letters", "posts"]


def make(i, rng):
    old, new = PAIRS[i]
    folder = FOLDERS[i]
    stems = rng.sample(WORDS, 5)
    files = {f"{s}{old}": f"{s} {rng.randint(1, 99)}\n" for s in stems[:3]}
    files[f"{stems[3]}.log"] = "keep this name\n"
    if i % 2:
        files[f"{stems[4]}{old}.bak"] = "not renamed: ends in .bak\n"
        hint = f"A name that only contains `{old}` further in keeps its name."
    else:
        files[f"{stems[4]} copy{old}"] = "has a space\n"
        hint = "One name has a space in it."
    after = {(n[: -len(old)] + new if n.endswith(old) else n): t for n, t in files.items()}
    instruction = f"""In the folder `/app/{folder}`, rename every file whose name ends in `{old}` so
that it ends in `{new}` instead (`a{old}` becomes `a{new}`), keeping its content. Other files keep
their names. {hint}"""
    solve = (f'for f in /app/{folder}/*{old}; do mv "$f" "${{f%{old}}}{new}"; done')
    return Task(instruction, {f"{folder}/{n}": t for n, t in files.items()},
                tests_folder_holds(f"/app/{folder}", after), solve, tags=["files", "rename"],
                one_step=False)
