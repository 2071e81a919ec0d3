"""The families' part of suite.toml's three-way split, drawn from the family names alone, so that
adding a family moves no task of another and regenerating a family moves none of its own.

A family is held out whole when its draw falls below HOLD_FAMILY (1/8). Otherwise its instances
go, in a seeded random order, a third each to evidence (suite.toml's `train`: what the evolve
agent sees), `validation` (train-side, never shown to the evolve agent) and `heldout` (the exam
only). The hand-written tasks above the marker in each list are left as they are."""
from __future__ import annotations

import hashlib
import random
import re
import textwrap
from pathlib import Path

from _common import SUITE

HOLD_FAMILY = 1 / 8
SIDES = ("train", "validation", "heldout")
MARKER = "  # Task families (tasks/suite/families/split.py writes the rest of this list)."


def _unit(text: str) -> float:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) / 2 ** 32


def held_out_whole(family: str) -> bool:
    return _unit(f"evoharness-split:{family}") < HOLD_FAMILY


def assign(family: str, ids: list[str]) -> dict[str, list[str]]:
    """Which of a family's instances go to each side (ids in instance order within a side)."""
    if held_out_whole(family):
        return {"train": [], "validation": [], "heldout": list(ids)}
    order = list(range(len(ids)))
    random.Random(f"evoharness-split-instances:{family}").shuffle(order)
    third = len(ids) // 3
    cut = {"validation": order[:third], "heldout": order[third:2 * third]}
    cut["train"] = order[2 * third:]
    return {side: [ids[n] for n in sorted(cut[side])] for side in SIDES}


def draw(made: dict[str, list[str]]) -> dict[str, list[str]]:
    sides = {side: [] for side in SIDES}
    for family, ids in made.items():
        for side, chosen in assign(family, ids).items():
            sides[side] += chosen
    return sides


def _lines(ids: list[str]) -> str:
    text = ", ".join(f'"{t}"' for t in ids) + ","
    return "\n".join("  " + line for line in textwrap.wrap(text, 98, break_on_hyphens=False, break_long_words=False)) + "\n" if ids else ""


def write(made: dict[str, list[str]], path: Path = SUITE / "suite.toml") -> dict[str, list[str]]:
    """Rewrite the families' part of each [split] list in suite.toml."""
    text = path.read_text()
    sides = draw(made)
    for side in SIDES:
        block = re.search(rf"^{side} = \[\n(.*?)^\]\n", text, re.MULTILINE | re.DOTALL)
        if block is None:  # validation: a new list after heldout's
            heldout = re.search(r"^heldout = \[\n.*?^\]\n", text, re.MULTILINE | re.DOTALL)
            text = text[:heldout.end()] + f"{side} = [\n]\n" + text[heldout.end():]
            block = re.search(rf"^{side} = \[\n(.*?)^\]\n", text, re.MULTILINE | re.DOTALL)
        body = block.group(1).split(MARKER + "\n")[0]
        body += MARKER + "\n" + _lines(sides[side])
        text = text[:block.start(1)] + body + text[block.end(1):]
    path.write_text(text)
    return sides
