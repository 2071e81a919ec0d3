import sys
from pathlib import Path

import pytest

from judge import agent_run


def calc(*args):
    assert Path("/app/calc.py").is_file(), "/app/calc.py does not exist"
    return agent_run([sys.executable, "/app/calc.py", *map(str, args)])


@pytest.mark.parametrize("args,expected", [
    (("add", 2, 3), "5"), (("sub", 2, 10), "-8"), (("mul", 6, 7), "42"), (("mul", -3, 4), "-12"),
    (("div", 7, 2), "3.50"), (("div", 10, 5), "2.00"), (("div", -1, 3), "-0.33")])
def test_results(args, expected):
    done = calc(*args)
    assert done.returncode == 0, f"calc.py {' '.join(map(str, args))} exited with {done.returncode}: {done.stderr[-300:]}"
    assert done.stdout.strip() == expected, f"calc.py {' '.join(map(str, args))} printed {done.stdout!r}, expected {expected}"


def test_division_by_zero():
    done = calc("div", 1, 0)
    assert done.returncode == 1, f"div 1 0 exited with {done.returncode}, expected 1"
    assert "error: division by zero" in done.stderr, f"div 1 0 printed {done.stderr!r} to stderr"


@pytest.mark.parametrize("args", [(), ("add", 1), ("pow", 2, 3), ("add", 1, 2, 3), ("add", "x", 2), ("mul", 1.5, 2)])
def test_usage(args):
    done = calc(*args)
    assert done.returncode == 2, f"calc.py {' '.join(map(str, args))} exited with {done.returncode}, expected 2"
    assert done.stderr.strip(), f"calc.py {' '.join(map(str, args))} printed no usage line on stderr"
