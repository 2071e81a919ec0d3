"""Write a file's checksum."""
import hashlib

from _common import WORDS, Task, tests_answer, tests_unchanged

CATEGORY = "file-operations"
WHAT = "write a file's SHA-256 or MD5 checksum, as the bare digest or in sha256sum's format"


def make(i, rng):
    algo = "sha256" if i % 3 != 2 else "md5"
    stem = rng.choice(WORDS)
    name = f"{stem}-{rng.randint(1, 9)}.{rng.choice(['tar', 'iso', 'bin', 'zip'])}"
    text = "".join(f"{rng.choice(WORDS)} {rng.randint(0, 9999)}\n" for _ in range(20))
    digest = getattr(hashlib, algo)(text.encode()).hexdigest()
    out = f"/app/{name}.{algo}"
    tool = f"{algo}sum"
    if i % 2 == 0:
        expected = digest
        what = f"Write just the hexadecimal {algo.upper()} digest (no file name) to `{out}`."
        solve = f"{tool} /app/{name} | cut -d' ' -f1 > {out}"
    else:
        expected = f"{digest}  {name}"
        what = (f"Write its checksum line in `{tool}`'s format, with the bare file name (not a "
                f"path): `<digest>  {name}` (two spaces), to `{out}`.")
        solve = f"cd /app && {tool} {name} > {out}"
    instruction = f"""Someone needs to verify the download `/app/{name}`. Compute its
{algo.upper()} checksum. {what}"""
    return Task(instruction, {name: text},
                tests_answer(out, expected) + tests_unchanged({f"/app/{name}": text}), solve,
                tags=["files", "checksum"])
