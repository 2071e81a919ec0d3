"""The host directories a sandbox makes under the temporary directory (a container's /app copy and
its private files, a writable /logs, a build's scratch), named with the owner token of the process
that made them (owners.py), so that those a killed driver or worker left can be told from a live
one's and deleted by the next batch or by `evoharness env sweep`."""
from __future__ import annotations

import re
import tempfile
from pathlib import Path

from evoharness.tasks.sandbox import owners
from evoharness.tasks.sandbox.host_files import remove_tree

_OWNED = re.compile(r"evo-[a-z]+-([0-9a-f]{32})-")


def owned_dir(kind: str, label: str = "") -> Path:
    """A new directory `evo-KIND-TOKEN-LABEL-XXXX` in the temporary directory, owned by this
    process."""
    label = re.sub(r"[^A-Za-z0-9_.-]+", "-", label)[:40]
    return Path(tempfile.mkdtemp(prefix=f"evo-{kind}-{owners.this_process()}-"
                                        f"{label + '-' if label else ''}"))


def sweep_dirs() -> list[Path]:
    """Delete the owned directories whose owner is gone, and end its builds (build_run.py);
    returns the directories."""
    from evoharness.tasks.sandbox.build_run import sweep as sweep_builds

    sweep_builds()
    swept = []
    for path in Path(tempfile.gettempdir()).glob("evo-*-*"):
        found = _OWNED.match(path.name)
        if found and path.is_dir() and not path.is_symlink() and not owners.alive(found.group(1)):
            remove_tree(path)
            swept.append(path)
    return swept
