import pytest

from judge import agent_calls

MODULE = "/app/calc.py"  # run only in a child process (judge.agent_calls), never imported here


def call(name, *args):
    [result] = agent_calls(MODULE, [(name, args)])
    return result


@pytest.mark.parametrize("a,b,expected", [(2, 3, 5), (10, -4, 6), (0, 0, 0), (1.5, 2.25, 3.75)])
def test_add(a, b, expected):
    got = call("add", a, b)
    assert got.get("value") == expected, f"add({a}, {b}) gave {got}, expected {expected}"


@pytest.mark.parametrize("a,b,expected", [(2, 3, 6), (-4, 5, -20), (7, 0, 0)])
def test_mul_still_works(a, b, expected):
    got = call("mul", a, b)
    assert got.get("value") == expected, f"mul({a}, {b}) gave {got}, expected {expected}"
