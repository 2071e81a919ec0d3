import pytest

from judge import agent_calls

MODULE = "/app/stats.py"  # run only in a child process (judge.agent_calls), never imported here


def median(*args):
    [result] = agent_calls(MODULE, [("median", args)])
    return result


@pytest.mark.parametrize("values,expected", [
    ([1, 2, 3], 2), ([3, 1, 2], 2), ([1, 2, 3, 4], 2.5), ([4, 1, 3, 2], 2.5),
    ([7], 7), ([5, 5], 5), ([10, -2, 3.5], 3.5), ([9, 1, 8, 2, 7, 3], 5.0)])
def test_median(values, expected):
    got = median(list(values))
    assert got.get("value") == expected, f"median({values}) returned {got}, expected {expected}"


def test_median_empty_raises_value_error():
    got = median([])
    assert got.get("raised") == "ValueError", f"median([]) must raise ValueError, got {got}"


def test_median_does_not_modify_input():
    got = median([3, 1, 2])
    assert got["args"] == ([3, 1, 2],), f"median() reordered its argument to {got['args'][0]}"


def test_median_accepts_tuple():
    got = median((3, 1, 2))
    assert got.get("value") == 2, f"median must accept any sequence, e.g. a tuple; got {got}"
