"""The functions that read figures from records (tests/docs/figures.py), on small records made
here: each reads what the record says and refuses a record that does not say it."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs import figures


def test_metrics_reads_a_benchmarks_lines_and_skips_the_rest(tmp_path: Path) -> None:
    record = tmp_path / "b.txt"
    record.write_text("# python benchmarks/b.py\n  detail: 9 s\nrollouts: 8 rollouts\n"
                      "ratio: 0.928 x (with / without)\nnote: words\n")
    assert figures.metrics(record) == {"rollouts": 8, "ratio": 0.928}


@pytest.mark.parametrize(("text", "seconds", "min_s"), [
    ("\tElapsed (wall clock) time (h:mm:ss or m:ss): 15:13.04\n", 913, "15 min 13 s"),
    ("\tElapsed (wall clock) time (h:mm:ss or m:ss): 1:02:03\n", 3723, "62 min 3 s"),
    ("\nreal\t9m42.498s\nuser\t1m0.000s\n", 582, "9 min 42 s"),
])
def test_wall_time_reads_gnu_time_and_the_shells(tmp_path: Path, text: str, seconds: int,
                                                 min_s: str) -> None:
    record = tmp_path / "time.txt"
    record.write_text(text)
    assert figures.wall_time(record)["seconds"] == seconds
    assert figures.wall_time(record)["min_s"] == min_s


def test_wall_time_refuses_a_record_without_one(tmp_path: Path) -> None:
    record = tmp_path / "time.txt"
    record.write_text("user\t1m0.000s\n")
    with pytest.raises(AssertionError, match="no wall time"):
        figures.wall_time(record)


def test_the_nights_changes_must_each_have_a_judgement(tmp_path: Path) -> None:
    night = Path(__file__).resolve().parents[2] / "docs" / "night"
    (tmp_path / "manifests").mkdir()
    (tmp_path / "judgements").mkdir()
    for path in (night / "manifests").glob("*.json"):
        (tmp_path / "manifests" / path.name).write_text(path.read_text())
    judged = sorted((night / "judgements").glob("*.json"))
    for path in judged[1:]:  # one change's judgement is missing
        (tmp_path / "judgements" / path.name).write_text(path.read_text())
    assert figures.run_changes(night) == {"changes": 4, "kept": 0}
    with pytest.raises(AssertionError, match="judgements"):
        figures.run_changes(tmp_path)
