"""The overview stays bounded whatever the suite size, and says exactly what it cut."""
from __future__ import annotations

import re
from pathlib import Path

import duckdb

from evoharness.debugger.distill import distill
from evoharness.debugger.overview import MAX_CHARS
from evoharness.debugger.synthetic import synthesise


def test_500_tasks_overview_bounded(tmp_path: Path) -> None:
    con = duckdb.connect(str(tmp_path / "t.duckdb"))
    synthesise(con, "big", tasks=500, k=2, steps=3, iterations=2)
    index = distill(con, "big", 2, tmp_path, hidden_tasks=set())
    text = index.overview.read_text()
    assert len(text) <= MAX_CHARS
    shown = re.findall(r"^\| \[(task-\d+)\]\(tasks/", text, flags=re.M)
    note = re.search(r"^\+ (\d+) more tasks \((\d+) passing stably\); see tasks/$", text, flags=re.M)
    assert note, "the overview must say what it cut"
    assert int(note.group(1)) == int(note.group(2)) == 500 - len(shown)
    # every changed (t % 4 == 2) and failing (t % 4 in (0, 1)) task is still listed
    numbers = {int(t.split("-")[1]) for t in shown}
    assert {t for t in range(500) if t % 4 != 3} <= numbers
    assert len(index.tasks) == 500 and len(index.rollouts) == 1000
    con.close()


def test_small_suite_cuts_nothing(tmp_path: Path) -> None:
    con = duckdb.connect(str(tmp_path / "t.duckdb"))
    synthesise(con, "small", tasks=8, k=2, steps=3, iterations=1)
    text = distill(con, "small", 1, tmp_path, hidden_tasks=set()).overview.read_text()
    assert len(re.findall(r"^\| \[task-", text, flags=re.M)) == 8
    assert "more tasks" not in text
    con.close()


def test_rollout_file_bounded(tmp_path: Path) -> None:
    con = duckdb.connect(str(tmp_path / "t.duckdb"))
    synthesise(con, "long", tasks=1, k=1, steps=3000, iterations=1)
    index = distill(con, "long", 1, tmp_path, hidden_tasks=set())
    (path,) = index.rollouts.values()
    text = path.read_text()
    assert len(text) <= 40_000
    assert "3000 events, 50 shown" in text  # 20 first, 20 last, 10 errors between
    con.close()
