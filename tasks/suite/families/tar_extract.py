"""Unpack an archive (or one file of it) into a folder."""
import io
import tarfile

from _common import WORDS, Task, tests_folder_holds


def _tar(files: dict[str, str], gz: bool) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz" if gz else "w", format=tarfile.GNU_FORMAT) as tar:
        for name, text in sorted(files.items()):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(data), 1_700_000_000, 0o644
            info.uname = info.gname = "dev"
            tar.addfile(info, io.BytesIO(data))
    raw = buffer.getvalue()
    if gz:  # the gzip header's time stamp: fixed, so reruns write the same bytes
        raw = raw[:4] + b"\0\0\0\0" + raw[8:]
    return raw


CATEGORY = "archives"
WHAT = "unpack a .tar.gz or .tar archive (or one file of it) into a folder that does not exist yet"


def make(i, rng):
    name = ["release", "dataset", "theme", "assets", "logs", "fixtures"][i]
    gz = i % 3 != 1
    archive = f"{name}{'.tar.gz' if gz else '.tar'}"
    stems = rng.sample(WORDS, 4)
    inside = {f"{name}/{s}.txt": f"{s} {rng.randint(1, 999)}\n" for s in stems[:3]}
    inside[f"{name}/docs/{stems[3]}.md"] = f"# {stems[3]}\n"
    dest = ["unpacked", "data", "themes", "static", "restore", "tmp_fixtures"][i]
    one = i % 2 == 1
    if one:
        pick = sorted(inside)[0]
        instruction = f"""`/app/{archive}` is a tar archive. Extract only the file `{pick}` from it
into the folder `/app/{dest}` (which does not exist yet), so that it ends up at
`/app/{dest}/{pick}`. Extract nothing else."""
        wanted = {pick: inside[pick]}
        solve = f"mkdir -p /app/{dest}\ntar -xf /app/{archive} -C /app/{dest} {pick}"
    else:
        instruction = f"""Unpack the tar archive `/app/{archive}` into the folder `/app/{dest}`
(which does not exist yet), so that for example `{sorted(inside)[0]}` ends up at
`/app/{dest}/{sorted(inside)[0]}`."""
        wanted = inside
        solve = f"mkdir -p /app/{dest}\ntar -xf /app/{archive} -C /app/{dest}"
    return Task(instruction, {archive: _tar(inside, gz)}, tests_folder_holds(f"/app/{dest}", wanted),
                solve, tags=["tar", "archive"])
