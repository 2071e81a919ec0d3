"""Copy the files with one extension into a new folder."""
from _common import WORDS, Task, tests_folder_holds, tests_unchanged

CATEGORY = "file-operations"
WHAT = "copy the files with one extension from a folder into a new folder"
EXTS = [".conf", ".csv", ".md", ".json", ".ini", ".yaml"]
SOURCES = ["etc", "data", "docs", "config", "input", "settings"]
TARGETS = ["backup", "saved", "copies", "keep", "snapshot", "spare"]


def make(i, rng):
    ext, src, dst = EXTS[i], SOURCES[i], rng.choice(TARGETS)
    stems = rng.sample(WORDS, 6)
    files = {f"{src}/{s}{ext}": f"{s} = {rng.randint(1, 99)}\n" for s in stems[:3]}
    files[f"{src}/{stems[3]}.txt"] = f"notes about {stems[3]}\n"
    trap = i % 3
    if trap == 0:
        files[f"{src}/{stems[0]}{ext}.bak"] = "old copy\n"
        hint = f"A name like `x{ext}.bak` does not end in `{ext}`."
    elif trap == 1:
        files[f"{src}/{stems[4]} old{ext}"] = f"{stems[4]} = 0\n"
        hint = "One name has a space in it."
    else:
        files[f"{src}/nested/{stems[5]}{ext}"] = "nested\n"
        hint = f"Only the files directly in `/app/{src}`, not in its subfolders."
    wanted = {p.split("/", 1)[1]: t for p, t in files.items()
              if p.endswith(ext) and p.count("/") == 1}
    verb = ["Copy", "Back up (copy)", "Duplicate (copy)"][i % 3]
    instruction = f"""{verb} every file in `/app/{src}` whose name ends in `{ext}` into the folder
`/app/{dst}/`, keeping each file's name and content. `/app/{dst}/` does not exist yet; create it.
Nothing else goes into `/app/{dst}/`, and the files in `/app/{src}` stay where they are. {hint}"""
    tests = tests_folder_holds(f"/app/{dst}", wanted) + tests_unchanged(
        {f"/app/{p}": t for p, t in files.items()})
    return Task(instruction, files, tests, f'mkdir -p /app/{dst}\ncp /app/{src}/*{ext} /app/{dst}/', tags=["files", "copy"])
