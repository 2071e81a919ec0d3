"""Move the files whose names start with a prefix into a new folder."""
from _common import WORDS, Task, tests_absent, tests_folder_holds, tests_unchanged

CATEGORY = "file-operations"
WHAT = "move the files whose names start with a given prefix into a new folder"
PREFIXES = ["2023-", "draft_", "old-", "tmp_", "report-", "img_"]
INBOXES = ["inbox", "downloads", "incoming", "scratch", "work", "uploads"]
TARGETS = ["archive", "drafts", "attic", "holding", "reports", "images"]


def make(i, rng):
    prefix, src, dst = PREFIXES[i], INBOXES[i], TARGETS[i]
    stems = rng.sample(WORDS, 7)
    ext = rng.choice([".txt", ".md", ".dat"])
    moved = {f"{prefix}{s}{ext}": f"{s} {rng.randint(100, 999)}\n" for s in stems[:3]}
    stay = {f"{s}{ext}": f"{s} keeps\n" for s in stems[3:5]}
    if i % 2 == 0:  # the prefix inside a name, not at its start
        stay[f"{stems[5]}-{prefix}{stems[6]}{ext}"] = "stays: the prefix is not at the start\n"
        hint = "A file whose name merely contains the prefix further in stays."
    else:
        stay[f"{prefix.upper()}{stems[5]}{ext}"] = "stays: upper case is another prefix\n"
        hint = "Names are case-sensitive."
    files = {f"{src}/{n}": t for n, t in {**moved, **stay}.items()}
    instruction = f"""In `/app/{src}`, move every file whose name starts with `{prefix}` into the
folder `/app/{dst}/` (create it; it does not exist yet). Keep their names and contents. The other
files stay in `/app/{src}`. {hint}"""
    tests = (tests_folder_holds(f"/app/{dst}", moved)
             + tests_absent([f"/app/{src}/{n}" for n in moved], name="moved_away")
             + tests_unchanged({f"/app/{src}/{n}": t for n, t in stay.items()}))
    return Task(instruction, files, tests, f"mkdir -p /app/{dst}\nmv /app/{src}/{prefix}* /app/{dst}/",
                tags=["files", "move"])
