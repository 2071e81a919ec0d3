"""The two sandboxes, for attacks that apply to both: a `sandbox_factory` fixture parametrized by
backend, bubblewrap on this host and a container of the task's image (skipped where no engine
works). Use it with `attack(..., factory=sandbox_factory)`."""
from __future__ import annotations

import pytest

from evoharness.tasks.sandbox.bwrap import BwrapSandbox
from evoharness.tasks.sandbox.environments import EnvironmentSettings, environments
from tests.fixtures.containers import container_home, needs_engine

__all__ = ["BACKENDS", "container_home", "sandbox_factory"]
BACKENDS = ["bwrap", pytest.param("container", marks=needs_engine)]


@pytest.fixture(params=BACKENDS)
def sandbox_factory(request):
    """bubblewrap's factory, or the container factory over the test base (which stands in for
    hello-world's ubuntu)."""
    if request.param == "bwrap":
        return BwrapSandbox.for_task
    home = request.getfixturevalue("container_home")
    return environments(EnvironmentSettings(kind="container", home=home))
