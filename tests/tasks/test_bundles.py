"""tasks/bundles.py: a directory packs to bytes that depend on its content only, and a worker
machine unpacks each archive once, even when two workers ask for it at the same moment."""
from __future__ import annotations

import os
import threading
from pathlib import Path

from evoharness.tasks.bundles import content_key, pack_dir, unpack_cached


def make_task(root: Path, text: str = "print('hi')\n") -> Path:
    (root / "environment").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "solution").mkdir()
    (root / "environment" / "main.py").write_text(text)
    (root / "tests" / "test.sh").write_text("#!/bin/sh\nexit 0\n")
    (root / "tests" / "test.sh").chmod(0o700)
    (root / "solution" / "solve.sh").write_text("secret\n")
    return root


def test_the_archive_depends_on_the_content_only(tmp_path: Path) -> None:
    first = pack_dir(make_task(tmp_path / "a"), ("solution",))
    second_dir = make_task(tmp_path / "b")
    os.utime(second_dir / "environment" / "main.py", (1, 1))
    (second_dir / "tests" / "test.sh").chmod(0o755)
    changed = pack_dir(make_task(tmp_path / "c", "print('bye')\n"), ("solution",))

    assert pack_dir(second_dir, ("solution",)) == first
    assert content_key(changed) != content_key(first)


def test_an_unpacked_archive_has_the_files_and_modes_but_not_the_solution(tmp_path: Path) -> None:
    archive = pack_dir(make_task(tmp_path / "task"), ("solution",))

    root = unpack_cached(content_key(archive), lambda: archive, tmp_path / "cache")

    assert (root / "environment" / "main.py").read_text() == "print('hi')\n"
    assert not (root / "solution").exists()
    assert (root.stat().st_mode & 0o777, (root / "tests" / "test.sh").stat().st_mode & 0o777) == (
        0o755, 0o755)


def test_each_archive_is_fetched_once_per_machine(tmp_path: Path) -> None:
    archive = pack_dir(make_task(tmp_path / "task"))
    fetched = []
    both_fetching = threading.Barrier(2)

    def fetch() -> bytes:
        fetched.append(1)
        if len(fetched) <= 2:
            both_fetching.wait(timeout=30)  # two workers miss the cache at the same moment
        return archive

    cache = tmp_path / "cache"
    found: list[Path] = []
    workers = [threading.Thread(target=lambda: found.append(unpack_cached("k", fetch, cache)))
               for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    again = unpack_cached("k", fetch, cache)

    assert found == [cache / "k", cache / "k"] and again == cache / "k"
    assert len(fetched) == 2  # the two racing workers; none after that
    assert [p.name for p in cache.iterdir()] == ["k"]  # the losing copy was dropped
    assert (again / "solution" / "solve.sh").read_text() == "secret\n"
