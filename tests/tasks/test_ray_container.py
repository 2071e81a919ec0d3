"""Ray workers use the run's environment: a task that runs in its image passes on a local Ray
instance (tests/fixtures/ray_scenarios.py's `containers`), each result records Ray's node, the
build log is kept with the run, and no container of the task is left."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.containers import container_home, needs_engine
from tests.fixtures.ray_scenarios import launch, namespaces_available

from .conftest import needs_bwrap

pytestmark = [needs_bwrap, needs_engine,
              pytest.mark.skipif(not namespaces_available(),
                                 reason="needs root and unshare for a private network")]
__all__ = ["container_home"]  # the fixture, used by name


def test_ray_workers_run_a_task_in_its_image(tmp_path: Path, container_home: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVOHARNESS_CONTAINERS", str(container_home))
    result = launch("containers", tmp_path, timeout=600)
    outcomes = {row[0]: row[2] for row in result["rollouts"]}
    assert len(outcomes) == 4 and set(outcomes.values()) == {"pass"}, result["rollouts"]
    [node] = result["nodes"]
    assert "/" in node  # host name / Ray's node id: a worker ran them
    assert result["logs"] == [f"{result['task']}.log"] and result["left"] == []
