"""A series of trials pre-registered on a library entry (evolve/library/filing.py
`register_series`, entry.py): the family and each trial's level fixed before the first, every
filed decision placed in it, none past it counted, and no new series while one has trials left."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from evoharness.errors import EvoError
from evoharness.evolve.library.entry import Numbers, Trial
from evoharness.evolve.library.filing import register_series
from evoharness.evolve.library.store import Library


def decided(run_id: str, level: float, at: float, where: str = "predicted") -> Trial:
    return Trial(run_id=run_id, change_id="c1", iteration=1, model="embedded", suite="suite",
                 suite_path="/suite", decision="keep", applied=True, filed_at=at, where=where,
                 level=level, numbers=Numbers(method="paired-trial", verdict="effective",
                                              p_value=0.01))


def test_a_series_fixes_the_levels_and_places_each_later_decision_in_it(tmp_path: Path) -> None:
    library = Library(tmp_path / "library")
    plan = register_series(library, "sure-failure-rescue", 3, 0.05, "halving")
    assert plan.levels == [0.025, 0.0125, 0.0125]
    entry = library.entry("sure-failure-rescue")  # the starter, copied in with its series
    assert entry.series == plan and entry.next_level() == 0.025
    before = decided("old", 0.05, plan.registered_at - 60)  # filed before: not the series'
    trials = [before, *(decided(f"r{i}", level, time.time() + i)
                        for i, level in enumerate([0.025, 0.0125]))]
    trials.append(decided("r1", 0.0125, time.time() + 1, where="validation"))  # same decision
    entry = entry.model_copy(update={"trials": trials})
    assert [t.run_id for t in entry.series_trials()] == ["r0", "r1"]
    assert entry.next_level() == 0.0125
    text = entry.text("")
    assert "series sure-failure-rescue-1: 3 trial(s), family-wise alpha 0.05" in text
    assert "level 0.025 (series trial 1 of 3, pre-registered level 0.025)" in text
    assert "in run old" in text and "series trial 0" not in text
    library.save([(entry, None)], "two trials")
    with pytest.raises(EvoError, match="1 trial\\(s\\) left"):
        register_series(library, "sure-failure-rescue", 2, 0.05)
    spent = entry.model_copy(update={"trials": [*trials, decided("r2", 0.0125, time.time() + 9),
                                                 decided("r3", 0.05, time.time() + 10)]})
    assert spent.next_level() is None
    assert "past the series' family of 3: claims nothing for it" in spent.text("")
    library.save([(spent, None)], "spent")
    assert register_series(library, "sure-failure-rescue", 2, 0.05).levels == [0.025, 0.025]


def test_no_series_on_an_unknown_entry(tmp_path: Path) -> None:
    with pytest.raises(EvoError, match="no such library or starter entry"):
        register_series(Library(tmp_path / "library"), "no-such-entry", 2, 0.05)
