"""What an entry's record says about carrying over: its trials on tasks the evolve agent never saw
(validation, held out), pooled across runs, and the rank that puts in among the offers. Filing the
trials is filing.py's; matching entries to a run's failures and building offers is cue.py's.

Why pool this way. Each filed trial carries its effect and an interval at a stated confidence
(filing.effect_interval: it holds at every look of the sequential test that produced it). Read as
normal with that half-width, the trials of one side combine by inverse-variance weights (a
fixed-effect meta-analysis): one estimate and a 95% interval over every run that tried the entry.
Train-side (predicted-task) trials never enter: the evolve agent chose those tasks, and the issue
this answers (60) showed gains there that did not carry over."""
from __future__ import annotations

import math
from statistics import NormalDist
from typing import Literal

from pydantic import BaseModel, ConfigDict

from .entry import LibraryEntry, Trial

UNSEEN = ("validation", "heldout")
SIDE_NAME = {"validation": "validation", "heldout": "held out"}
CONFIDENCE = 0.95
Tier = Literal["carries", "unknown", "not_shown"]
TIER_ORDER: dict[Tier, int] = {"carries": 0, "unknown": 1, "not_shown": 2}


class Pooled(BaseModel):
    """One side's trials pooled: effect (pass-rate points / 100) and its 95% interval."""

    model_config = ConfigDict(frozen=True)

    effect: float
    lo: float
    hi: float
    runs: int

    def text(self, side: str) -> str:
        runs = f"{self.runs} run" + ("s" if self.runs != 1 else "")
        return (f"{SIDE_NAME[side]} {100 * self.effect:+.0f} [{100 * self.lo:+.0f}, "
                f"{100 * self.hi:+.0f}] over {runs}")


def pooled(trials: list[Trial]) -> Pooled | None:
    """The trials' effects combined by inverse-variance weights (those with an interval only);
    None when none has one."""
    weights, effects = [], []
    for t in trials:
        n = t.numbers
        if n.effect is None or n.lo is None or n.hi is None or not n.confidence:
            continue
        z = NormalDist().inv_cdf(0.5 + n.confidence / 2)
        se = max((n.hi - n.lo) / (2 * z), 1e-6)
        weights.append(1 / se ** 2)
        effects.append(n.effect)
    if not weights:
        return None
    mean = sum(w * e for w, e in zip(weights, effects)) / sum(weights)
    half = NormalDist().inv_cdf(0.5 + CONFIDENCE / 2) / math.sqrt(sum(weights))
    runs = len({t.run_id for t in trials if t.numbers.lo is not None})
    return Pooled(effect=mean, lo=mean - half, hi=mean + half, runs=runs)


class CarryOver(BaseModel):
    """An entry's record on each unseen side, its tier and the line shown beside its offer."""

    model_config = ConfigDict(frozen=True)

    sides: dict[str, Pooled]

    @property
    def tier(self) -> Tier:
        if any(p.lo > 0 for p in self.sides.values()):
            return "carries"
        return "not_shown" if self.sides else "unknown"

    @property
    def best_lower(self) -> float:
        """The highest lower bound over the sides (ranks entries that carry over)."""
        return max((p.lo for p in self.sides.values()), default=-1.0)

    def reason(self) -> str:
        if not self.sides:
            return "no validation or held-out record"
        return "; ".join(self.sides[side].text(side) for side in UNSEEN if side in self.sides)


def carry_over(entry: LibraryEntry) -> CarryOver:
    sides = {side: p for side in UNSEEN
             if (p := pooled([t for t in entry.trials if t.where == side])) is not None}
    return CarryOver(sides=sides)


def rank_key(entry: LibraryEntry) -> tuple[int, float]:
    """Entries shown to carry over first (the highest lower bound first), then those with no
    record, then those whose record shows no gain; the caller breaks ties by the cue."""
    record = carry_over(entry)
    return TIER_ORDER[record.tier], -record.best_lower if record.tier == "carries" else 0.0
