"""tasks/split.py: the default split of a folder without suite.toml, and load_suite with a split
given (the one a run keeps in run.yaml)."""
from __future__ import annotations

import hashlib

import pytest

from evoharness.errors import EvoError
from evoharness.tasks.split import hash_split, listed_split, parse_heldout, rank
from evoharness.tasks.task import TaskSplit, load_suite
from tests.fixtures.suites import write_suite

IDS = [f"task-{n:02d}" for n in range(20)]


def test_the_lowest_hashes_are_held_out_whatever_the_order_given():
    split = hash_split(IDS)
    by_hash = sorted(IDS, key=lambda t: hashlib.sha256(t.encode()).hexdigest())
    assert set(split.heldout) == set(by_hash[:5])  # a quarter of 20
    assert split.train == [t for t in IDS if t not in split.heldout]  # the given order kept
    assert set(hash_split(list(reversed(IDS))).heldout) == set(split.heldout)


@pytest.mark.parametrize("n, share, held", [(2, 0.25, 1), (3, 0.25, 1), (7, 0.25, 2),
                                            (8, 0.5, 4), (4, 0.99, 3), (1, 0.25, 0)])
def test_at_least_one_of_each_side_when_there_are_two_tasks(n, share, held):
    split = hash_split(IDS[:n], share)
    assert len(split.heldout) == held and len(split.train) == n - held


@pytest.mark.parametrize("share", [0, 1, -0.1, 1.5])
def test_a_share_outside_zero_and_one_is_refused(share):
    with pytest.raises(EvoError, match="between 0 and 1"):
        hash_split(IDS, share)


def test_heldout_as_a_list_names_exactly_those_tasks():
    assert parse_heldout("task-03, task-01", IDS).heldout == ["task-01", "task-03"]
    with pytest.raises(EvoError, match="not in the task folder"):
        listed_split(IDS, ["task-99"])
    with pytest.raises(EvoError, match="every task would be held out"):
        listed_split(IDS[:2], IDS[:2])


def test_a_suite_loads_with_a_split_instead_of_suite_toml(tmp_path):
    root = write_suite(tmp_path / "s", ["alpha", "beta", "gamma"], [], split_file=False)
    suite = load_suite(root, TaskSplit(train=["write-alpha"], heldout=["write-gamma"]))
    assert [(t.id, s) for t, s in suite.items()] == [("write-alpha", "train"),
                                                      ("write-gamma", "heldout")]
    with pytest.raises(EvoError, match="suite file is missing"):
        load_suite(root)


def test_validation_moves_the_lowest_hashing_train_ids_and_leaves_one_to_train_on():
    from evoharness.tasks.split import with_validation

    ids = [f"t{i}" for i in range(8)]
    split = with_validation(hash_split(ids), 0.25)
    assert len(split.validation) == 2 and len(split.train) == 4
    assert set(split.validation) == set(sorted(hash_split(ids).train, key=rank)[:2])
    tiny = with_validation(hash_split(["a", "b", "c"]), 0.9)
    assert len(tiny.train) == 1 and len(tiny.validation) == 1
