"""Writes every task family's instances as complete Harbor task folders, tasks/suite/<family>-<n>/,
and the families' part of suite.toml's split (split.py). Deterministic: a rerun rewrites the same
bytes. Stand-alone (stdlib only):

    python3 tasks/suite/families/generate.py

A family is one file here (not starting with `_`): CATEGORY, WHAT (what it asks, for the docs),
COUNT (instances, default 6) and make(index, rng) -> _common.Task."""
from __future__ import annotations

import importlib.util
import re
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import SUITE, rng_for, write_task  # noqa: E402

DEFAULT_COUNT = 6


def families() -> dict[str, object]:
    """Each family's module by family name (file name with `-` for `_`), sorted."""
    found = {}
    for path in sorted(HERE.glob("*.py")):
        if path.name.startswith("_") or path.stem in ("generate", "split"):
            continue
        spec = importlib.util.spec_from_file_location(f"family_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        found[path.stem.replace("_", "-")] = module
    return found


def instance_ids(name: str, module: object) -> list[str]:
    return [f"{name}-{n}" for n in range(1, getattr(module, "COUNT", DEFAULT_COUNT) + 1)]


def generate(out: Path = SUITE) -> dict[str, list[str]]:
    """Write every instance into `out`; remove instance folders a family no longer makes. Returns
    the task ids by family."""
    made = {}
    for name, module in families().items():
        ids = instance_ids(name, module)
        for index, task_id in enumerate(ids):
            task = module.make(index, rng_for(name, index))
            write_task(out / task_id, module.CATEGORY, name, task)
        for stale in out.glob(f"{name}-*"):
            family_line = f'family = "{name}"'
            toml = stale / "task.toml"
            if stale.name not in ids and toml.exists() and family_line in toml.read_text() \
                    and re.fullmatch(rf"{re.escape(name)}-\d+", stale.name):
                shutil.rmtree(stale)
        made[name] = ids
    return made


def main(argv: list[str]) -> None:
    out = Path(argv[0]) if argv else SUITE
    made = generate(out)
    import split
    sides = split.write(made, out / "suite.toml")
    print(f"{sum(map(len, made.values()))} tasks in {len(made)} families: "
          + ", ".join(f"{len(ids)} {side}" for side, ids in sides.items()))


if __name__ == "__main__":
    main(sys.argv[1:])
