"""Fix the wrong operator in a small Python function."""
from _common import Task, solve_replace

CATEGORY = "python-bugfix"
WHAT = "fix the one wrong operator in a small Python function"
CASES = [
    ("geometry.py", "area", "width, height", "width * height", "width + height",
     "The area of a width x height rectangle.", [((3, 4), 12), ((5, 5), 25), ((1, 7), 7)]),
    ("money.py", "total", "price, qty", "price * qty", "price ** qty",
     "What qty items at price cost together.", [((3, 4), 12), ((10, 2), 20), ((2, 5), 10)]),
    ("temps.py", "difference", "high, low", "high - low", "low - high",
     "How much higher high is than low.", [((30, 12), 18), ((5, -5), 10), ((7, 7), 0)]),
    ("stats.py", "average", "a, b", "(a + b) / 2", "a + b / 2",
     "The mean of a and b.", [((4, 8), 6.0), ((1, 2), 1.5), ((10, 0), 5.0)]),
    ("clock.py", "to_minutes", "hours, minutes", "hours * 60 + minutes", "hours * 60 - minutes",
     "hours and minutes as a number of minutes.", [((2, 15), 135), ((0, 45), 45), ((1, 0), 60)]),
    ("grades.py", "percent", "score, out_of", "score * 100 // out_of", "score * 100 % out_of",
     "score as a whole percentage of out_of (rounded down).",
     [((45, 50), 90), ((1, 3), 33), ((7, 7), 100)]),
]


def make(i, rng):
    module, func, args, good, bad, doc, cases = CASES[i]
    helper = "\n\ndef describe():\n    return \"%s helpers\"\n" % module[:-3]
    code = f'def {func}({args}):\n    """{doc}"""\n    return {bad}\n' + helper
    tests = f'''
import pytest

from judge import agent_calls

MODULE = "/app/{module}"  # run only in a child process (judge.agent_calls), never imported here


@pytest.mark.parametrize("args,expected", {cases!r})
def test_{func}(args, expected):
    [got] = agent_calls(MODULE, [("{func}", args)])
    assert got.get("value") == expected, f"{func}{{args}} gave {{got}}, expected {{expected}}"


def test_rest_unchanged():
    [got] = agent_calls(MODULE, [("describe", ())])
    assert got.get("value") == "{module[:-3]} helpers"
'''
    say = ["gives wrong answers", "is wrong", "returns the wrong number"][i % 3]
    ex_args, ex_out = cases[0]
    instruction = f"""`{func}` in `/app/{module}` {say}: `{func}{ex_args}` should return `{ex_out}`.
Its docstring says what it should do. Fix the function (one expression is wrong) and keep the rest
of the file as it is.{f" The wrong line is `return {bad}`." if i % 2 == 0 else ""}"""
    solve = solve_replace(f"/app/{module}", f"return {bad}", f"return {good}")
    return Task(instruction, {module: code}, tests, solve, tags=["python", "bugfix"])
