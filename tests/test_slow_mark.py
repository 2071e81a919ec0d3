"""The slow-mark check itself, run on a tiny inner session with a tiny CPU threshold."""
from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BURN = """
import time, pytest

def burn():
    end = time.process_time() + 0.3
    while time.process_time() < end:
        pass

def test_costly_unmarked():
    burn()

@pytest.mark.slow
def test_costly_marked():
    burn()

def test_cheap():
    pass
"""


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one process", "xdist"])
def test_an_unmarked_costly_test_fails_the_session_and_a_marked_one_does_not(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, workers: list[str]):
    """Under pytest-xdist the workers measure and the controller, which alone reports, learns it."""
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.setenv("EVOHARNESS_SLOW_CPU_SECONDS", "0.1")
    pytester.makeini("[pytest]\nmarkers =\n    slow: slow\n")
    pytester.makepyfile(test_inner=BURN)
    result = pytester.runpytest_subprocess("-p", "tests.slow_mark", *workers)
    result.assert_outcomes(passed=3)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*test_inner.py::test_costly_unmarked: * s of CPU > 0.1 s*"])
    assert "test_costly_marked:" not in result.stdout.str()
    assert "test_cheap:" not in result.stdout.str()
