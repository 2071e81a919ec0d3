"""Write the body of a one-line Python function."""
from _common import Task, solve_replace

CATEGORY = "python-bugfix"
WHAT = "write the one-line body of a Python function its docstring describes"
CASES = [
    ("textutil.py", "shout", "text", "Return text in upper case with '!' added.", "text.upper() + '!'",
     [(("hi",), "HI!"), (("Hello there",), "HELLO THERE!"), (("",), "!")]),
    ("listutil.py", "last", "items", "Return the last element of a non-empty list.", "items[-1]",
     [(([1, 2, 3],), 3), ((["a"],), "a"), (([5, 4],), 4)]),
    ("numutil.py", "is_even", "n", "Return True when n is even, else False.", "n % 2 == 0",
     [((4,), True), ((7,), False), ((0,), True), ((-3,), False)]),
    ("strutil.py", "initials", "name", "Return the upper-case first letters of each word of name.",
     "''.join(w[0].upper() for w in name.split())",
     [(("ada lovelace",), "AL"), (("Grace Brewster Hopper",), "GBH"), (("x",), "X")]),
    ("mathutil.py", "clamp", "x, lo, hi", "Return x limited to the range [lo, hi].",
     "max(lo, min(hi, x))", [((5, 0, 10), 5), ((-2, 0, 10), 0), ((12, 0, 10), 10)]),
    ("wordutil.py", "count_words", "text", "Return how many words (split on whitespace) text has.",
     "len(text.split())", [(("one two three",), 3), (("",), 0), ((" spaced   out ",), 2)]),
]


EDIT_HINT = (" Replace the line `raise NotImplementedError` with one `return` line (edit the file; "
             "running it shows nothing).")


def make(i, rng):
    module, func, args, doc, body, cases = CASES[i]
    code = f'def {func}({args}):\n    """{doc}"""\n    raise NotImplementedError\n'
    tests = f'''
import pytest

from judge import agent_calls

MODULE = "/app/{module}"  # run only in a child process (judge.agent_calls), never imported here


@pytest.mark.parametrize("args,expected", {cases!r})
def test_{func}(args, expected):
    [got] = agent_calls(MODULE, [("{func}", args)])
    assert "value" in got and got["value"] == expected and type(got["value"]) is type(expected), \\
        f"{func}{{args}} gave {{got}}, expected {{expected!r}}"
'''
    ex_args, ex_out = cases[0]
    instruction = f"""`/app/{module}` has a function `{func}` that only raises
`NotImplementedError`. Implement it as its docstring says: {doc} For example,
`{func}{ex_args if len(ex_args) > 1 else "(" + repr(ex_args[0]) + ")"}` returns `{ex_out!r}`.{EDIT_HINT if i % 2 == 0 else ""}"""
    solve = solve_replace(f"/app/{module}", "raise NotImplementedError", f"return {body}")
    return Task(instruction, {module: code}, tests, solve, tags=["python", "implement"])
