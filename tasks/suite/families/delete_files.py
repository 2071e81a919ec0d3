"""Delete the files matching a pattern, keeping the rest."""
from _common import WORDS, Task, tests_absent, tests_unchanged

CATEGORY = "file-operations"
WHAT = "delete the files with one extension from a folder tree, keeping everything else"
EXTS = [".tmp", ".bak", ".pyc", ".swp", ".orig", ".part"]
ROOTS = ["build", "site", "src", "docs", "patches", "downloads"]


def make(i, rng):
    ext, root = EXTS[i], ROOTS[i]
    stems = rng.sample(WORDS, 8)
    sub = stems[7]
    doomed = [f"{root}/{stems[0]}{ext}", f"{root}/{stems[1]}{ext}", f"{root}/{sub}/{stems[2]}{ext}"]
    keep = {f"{root}/{stems[3]}.txt": "keep\n", f"{root}/{sub}/{stems[4]}.txt": "keep too\n",
            f"{root}/{stems[5]}{ext}.txt": f"keep: ends in .txt, not {ext}\n"}
    if i % 2:
        keep[f"{root}/{stems[6]}{ext.upper()}"] = "keep: upper case\n"
    files = {**{p: "junk\n" for p in doomed}, **keep}
    place = ["including its subfolders", "and in every folder below it", "at any depth"][i % 3]
    instruction = f"""Delete every file whose name ends in `{ext}` in `/app/{root}`, {place}. Keep
every other file as it is."""
    return Task(instruction, files,
                tests_absent([f"/app/{p}" for p in doomed])
                + tests_unchanged({f"/app/{p}": t for p, t in keep.items()}),
                f"find /app/{root} -type f -name '*{ext}' -delete", tags=["files", "delete"])
