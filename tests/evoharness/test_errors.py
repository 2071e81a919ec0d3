"""evoharness/errors.py: an error shows a long list by whole items, its hint as a sentence of its
own, and a pydantic ValidationError as file / field / value, never pydantic's own text."""
from __future__ import annotations

import re

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError

from evoharness.errors import (SHOWN_CHARS, EvoError, ValidationFailed, from_validation, shown,
                               validation_problems)


def test_a_long_list_is_cut_between_items_and_says_how_many_are_left():
    ids = [f"a-rather-long-task-identifier-{n:03d}" for n in range(40)]
    text = shown(ids)
    assert len(text) <= SHOWN_CHARS + 20
    listed = re.findall(r"'([^']*)'", text)
    assert listed and all(item in ids for item in listed)  # no id cut in two
    assert text.endswith(f", ... {len(ids) - len(listed)} more]")


def test_a_short_value_is_its_repr_and_a_long_string_says_it_was_cut():
    assert shown(["a", "b"]) == "['a', 'b']" and shown(3) == "3"
    assert shown("x" * 1000).endswith("...") and len(shown("x" * 1000)) == SHOWN_CHARS


def test_the_hint_starts_its_own_sentence():
    error = EvoError("every task would be held out", field="heldout", value=["a"],
                     hint="leave at least one task to train on")
    assert str(error) == ("heldout: every task would be held out (got ['a']). "
                          "Leave at least one task to train on")


class _Split(BaseModel):
    model_config = ConfigDict(extra="forbid")
    train: list[str]
    heldout: list[str] = []
    k: int = 1


def _error(data: dict) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        _Split.model_validate(data)
    return caught.value


def test_validation_problems_name_file_field_and_value_in_plain_words():
    problems = validation_problems(_error({"heldout": [], "k": "x", "extra": 1}),
                                   file="suite.toml", field_prefix="split")
    said = {p.field: str(p) for p in problems}
    assert said["split.train"] == "suite.toml: split.train: is required but missing"
    assert said["split.extra"] == "suite.toml: split.extra: is not a known field (got 1)"
    assert said["split.k"].startswith("suite.toml: split.k: Input should be a valid integer")
    assert said["split.k"].endswith("(got 'x')")
    for text in said.values():
        assert "validation error" not in text and "pydantic" not in text


def test_one_problem_is_one_line_and_several_are_listed():
    one = from_validation(_error({"heldout": []}), "suite.toml", file="suite.toml")
    assert isinstance(one, ValidationFailed) and "\n" not in str(one)
    assert str(one) == "suite.toml: train: is required but missing"
    several = from_validation(_error({"k": "x"}), "suite.toml", file="suite.toml")
    assert str(several).startswith("suite.toml is invalid (2 problem(s)):\n  - ")
