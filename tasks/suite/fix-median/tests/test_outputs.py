import importlib.util

import pytest


def load():
    spec = importlib.util.spec_from_file_location("stats", "/app/stats.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("values,expected", [
    ([1, 2, 3], 2), ([3, 1, 2], 2), ([1, 2, 3, 4], 2.5), ([4, 1, 3, 2], 2.5),
    ([7], 7), ([5, 5], 5), ([10, -2, 3.5], 3.5), ([9, 1, 8, 2, 7, 3], 5.0)])
def test_median(values, expected):
    got = load().median(list(values))
    assert got == expected, f"median({values}) returned {got}, expected {expected}"


def test_median_empty_raises_value_error():
    with pytest.raises(ValueError):
        load().median([])


def test_median_does_not_modify_input():
    values = [3, 1, 2]
    load().median(values)
    assert values == [3, 1, 2], f"median() reordered its argument to {values}"


def test_median_accepts_tuple():
    assert load().median((3, 1, 2)) == 2, "median must accept any sequence, e.g. a tuple"
