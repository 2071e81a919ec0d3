"""Pack a folder into a tar archive."""
from _common import WORDS, Task

CATEGORY = "archives"
WHAT = "pack a folder into a .tar.gz (or .tar) archive whose paths start with the folder's name"


def make(i, rng):
    folder = ["site", "photos", "reports", "config", "notes", "backup"][i]
    gz = i % 3 != 2
    archive = f"/app/{folder}{'.tar.gz' if gz else '.tar'}"
    files = {f"{folder}/{s}.txt": f"{s} {rng.randint(1, 999)}\n" for s in rng.sample(WORDS, 3)}
    files[f"{folder}/{rng.choice(WORDS)}/inner.txt"] = "inner\n"
    kind = "gzip-compressed tar archive" if gz else "plain (uncompressed) tar archive"
    instruction = f"""Pack the folder `/app/{folder}` (with everything in it) into a {kind}
`{archive}`. Paths inside the archive must start with `{folder}/` (for example
`{next(iter(files))}`), not with `/app` or `app/`."""
    expected = {p: t for p, t in files.items()}
    tests = f'''
import tarfile


def test_archive():
    path = {archive!r}
    assert Path(path).is_file(), f"{{path}} does not exist"
    mode = {"r:gz" if gz else "r:"!r}
    try:
        archive = tarfile.open(path, mode)
    except (tarfile.TarError, OSError) as error:
        raise AssertionError(f"{{path}} is not a {kind}: {{error}}")
    with archive:
        found = {{m.name.removeprefix("./"): archive.extractfile(m).read().decode()
                 for m in archive.getmembers() if m.isfile()}}
    expected = {expected!r}
    assert sorted(found) == sorted(expected), f"the archive holds {{sorted(found)}}, expected {{sorted(expected)}}"
    assert found == expected, "a file in the archive has the wrong content"
'''
    flag = "czf" if gz else "cf"
    return Task(instruction, files, tests, f"tar -C /app -{flag} {archive} {folder}",
                tags=["tar", "archive"])
