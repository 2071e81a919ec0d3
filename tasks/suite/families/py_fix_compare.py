"""Fix a boundary comparison in a small Python function."""
from _common import Task, solve_replace

CATEGORY = "python-bugfix"
WHAT = "fix a comparison that is wrong at the boundary (< where <= belongs, and so on)"
CASES = [
    ("rules.py", "is_adult", "age", "age >= 18", "age > 18", "True from the age of 18 on.",
     [((18,), True), ((17,), False), ((40,), True)]),
    ("shipping.py", "free_shipping", "total", "total >= 50", "total > 50",
     "True when the order total is 50 or more.", [((50,), True), ((49.99,), False), ((80,), True)]),
    ("exam.py", "passed", "score", "score >= 60", "score > 60", "True for a score of 60 or more.",
     [((60,), True), ((59,), False), ((100,), True)]),
    ("stock.py", "needs_reorder", "units", "units <= 5", "units < 5",
     "True when 5 units or fewer are left.", [((5,), True), ((6,), False), ((0,), True)]),
    ("tickets.py", "child_price", "age", "age < 12", "age <= 12",
     "True for children under 12 (12-year-olds pay full price).",
     [((12,), False), ((11,), True), ((3,), True)]),
    ("battery.py", "is_low", "percent", "percent <= 20", "percent < 20",
     "True at 20 percent or less.", [((20,), True), ((21,), False), ((5,), True)]),
]


def make(i, rng):
    module, func, arg, good, bad, doc, cases = CASES[i]
    code = f'def {func}({arg}):\n    """{doc}"""\n    return {bad}\n'
    tests = f'''
import pytest

from judge import agent_calls

MODULE = "/app/{module}"  # run only in a child process (judge.agent_calls), never imported here


@pytest.mark.parametrize("args,expected", {cases!r})
def test_{func}(args, expected):
    [got] = agent_calls(MODULE, [("{func}", args)])
    assert got.get("value") is expected, f"{func}{{args}} gave {{got}}, expected {{expected}}"
'''
    edge = cases[0]
    instruction = f"""`{func}` in `/app/{module}` is wrong at the boundary: `{func}({edge[0][0]})`
returns `{not edge[1]}` but should return `{edge[1]}`.
The docstring says what it should do: {doc} Fix the comparison.{f" The wrong line is `return {bad}`." if i % 2 == 0 else ""}"""
    solve = solve_replace(f"/app/{module}", f"return {bad}", f"return {good}")
    return Task(instruction, {module: code}, tests, solve, tags=["python", "bugfix"])
