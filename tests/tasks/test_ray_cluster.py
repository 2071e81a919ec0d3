"""tasks/ray_executor.py on a real Ray cluster on this machine (a head with no CPU for rollouts and
a node with 2, each started with `ray start`), in namespaces of its own: the node is killed while
both rollouts in flight run on it, a third node joins and they run again there; the driver itself
is SIGKILLed in the next EVAL, and `evoharness evolve --resume` finishes the run
(tests/fixtures/ray_scenarios.py: cluster)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.fixtures.ray_scenarios import launch, namespaces_available

from .conftest import needs_bwrap

pytestmark = [pytest.mark.slow, needs_bwrap,
              pytest.mark.skipif(not namespaces_available(),
                                 reason="needs root and unshare for a private network")]
# 3 tasks x k=2, twice for the calibrated baseline, then once more after one evolve iteration.
EXPECTED = {f"it{it:03d}-write-{task}-a{attempt:02d}"
            for task in ("alpha", "beta", "gamma")
            for it, attempts in ((0, 4), (1, 2)) for attempt in range(attempts)}
BASELINE = 12


def test_a_lost_node_and_a_killed_driver_lose_no_rollout_and_repeat_none(tmp_path: Path) -> None:
    result = launch("cluster", tmp_path, timeout=900)

    assert result["killed_processes"] >= 3  # the node's raylet, its agents and its two workers
    lost, at_kill = result["lost"], result["files_at_kill"]
    # Both rollouts of the lost node ran again (each once) and were recorded before the kill.
    assert len(lost) == len(set(lost)) == 2 and set(lost) <= set(at_kill), result["first_driver"]
    [dead] = set(re.findall(r"again elsewhere: \S+ on node (\S+): ", result["first_driver"]))
    [joined] = result["summary"]["nodes"]  # the node that joined ran every recorded rollout
    assert joined != dead  # the lost node is named, and nothing it ran was recorded
    # The first driver finished the baseline and was killed with iteration 1's EVAL under way.
    assert len(at_kill) == BASELINE and all(i.startswith("it000-") for i in at_kill)
    assert result["resume_exit"] == 0, result["resume_output"]
    summary = result["summary"]
    ids = [r[0] for r in summary["rollouts"]]
    extra = {i for i in ids if i not in EXPECTED}  # ATTRIBUTE's targeted re-runs, if any
    assert set(ids) - extra == EXPECTED and all(i.startswith("it001-") for i in extra)
    assert summary["repeats"] == 0 and sorted(ids) == [f[:-5] for f in summary["files"]]
    assert not [r for r in summary["rollouts"] if r[2] == "infra_error"]
    assert result["fsck_exit"] == 0 and "error" not in result["fsck_output"].lower()
