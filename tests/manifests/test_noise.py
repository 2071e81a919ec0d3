"""The flip record and pass counts read from the rollouts table."""
from __future__ import annotations

from manifests.noise import TaskCounts, counts_from_db, noise_from_db

from .builders import db


def add(con, iteration, commit, task, outcomes: str):
    """outcomes: one letter per attempt, P pass, F fail, I infra_error."""
    names = {"P": "pass", "F": "fail", "I": "infra_error"}
    for attempt, letter in enumerate(outcomes):
        con.execute(
            "INSERT INTO rollouts VALUES (?, 'run1', ?, ?, 'train', ?, ?, 'm', ?, 0, 0, 0, 0, 0, "
            "'done', '', 0, '')",
            [f"it{iteration}-{task}-{attempt}", iteration, task, attempt, commit, names[letter]],
        )


def test_baseline_halves_and_later_evaluations_of_the_same_commit(tmp_path):
    con = db(tmp_path / "t.duckdb")
    add(con, 0, "c0", "a", "PPFF")  # halves 2/2 vs 0/2: a flip
    add(con, 0, "c0", "b", "PFPF")  # 1/2 twice: mixed, no flip
    add(con, 0, "c0", "c", "PPPP")
    add(con, 1, "c1", "c", "FF")  # another commit: not compared with c0
    add(con, 2, "c0", "c", "PF")  # c0 again (a revert back): flip and mixed
    base = noise_from_db(con, "run1", k=2, upto_iteration=1)
    assert (base.flips, base.comparisons) == ({"a": 1, "b": 0, "c": 0}, {"a": 1, "b": 1, "c": 1})
    assert [t for t in "abc" if base.unstable(t)] == ["a", "b"]
    assert base.band() == 1.0
    later = noise_from_db(con, "run1", k=2, upto_iteration=2)
    assert later.unstable("c") and later.flip_rate("c") == 0.5


def test_partial_groups_are_not_evaluations_and_infra_errors_do_not_count(tmp_path):
    con = db(tmp_path / "t.duckdb")
    add(con, 0, "c0", "a", "PPP")  # third attempt is a lone extra
    add(con, 0, "c0", "b", "PIPP")  # first half has an infra error: partial
    nm = noise_from_db(con, "run1", k=2, upto_iteration=0)
    assert nm.comparisons == {"a": 0, "b": 0} and not nm.unstable("a")
    assert counts_from_db(con, "run1", 0) == {
        "a": TaskCounts(passes=3, total=3), "b": TaskCounts(passes=3, total=3)}
