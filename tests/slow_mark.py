"""A pytest plugin that keeps the `slow` mark honest: a test not marked slow that costs more than
the threshold in CPU seconds (its process and the children it waited for: sandboxes, git, the
verifier) fails the session, naming it. CPU time rather than wall time, because a loaded machine
stretches the wall clock of every test but barely changes the work a test does. It cannot see
processes reaped outside this process tree (inside a PID namespace whose init is not waited for),
so tests that run daemons that way (Ray's) are judged by the work this process does.

The cost travels on the test's teardown report, so under pytest-xdist the controller (which alone
prints the summary and sets the exit status) learns what each worker measured."""
from __future__ import annotations

import os
import resource

import pytest

DEFAULT_SLOW_CPU_SECONDS = 20.0
_PROPERTY = "unmarked_cpu_seconds"
_STARTED = pytest.StashKey[float]()
_threshold = DEFAULT_SLOW_CPU_SECONDS
_unmarked_costly: dict[str, float] = {}


def pytest_configure(config: pytest.Config) -> None:
    # Read once: a test that sets the variable for an inner session must not change this one's.
    global _threshold
    _threshold = float(os.environ.get("EVOHARNESS_SLOW_CPU_SECONDS", DEFAULT_SLOW_CPU_SECONDS))


def _cpu_seconds() -> float:
    own, children = (resource.getrusage(who) for who in (resource.RUSAGE_SELF,
                                                         resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    # From setup on: a module-scoped fixture's cost falls on the first test using it.
    item.stash[_STARTED] = _cpu_seconds()
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    if call.when != "teardown" or item.get_closest_marker("slow") is not None:
        return
    spent = _cpu_seconds() - item.stash[_STARTED]
    if spent > _threshold:
        outcome.get_result().user_properties.append((_PROPERTY, spent))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    for name, value in report.user_properties:
        if name == _PROPERTY:
            _unmarked_costly[report.nodeid] = value


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _unmarked_costly and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter) -> None:
    if not _unmarked_costly:
        return
    terminalreporter.section("tests that must be marked slow", red=True)
    for nodeid, spent in sorted(_unmarked_costly.items(), key=lambda kv: -kv[1]):
        terminalreporter.line(f"{nodeid}: {spent:.1f} s of CPU > {_threshold:g} s; "
                              "add @pytest.mark.slow")
