"""The path a run took, one row per change in the order they were made: its iteration and
component, what it predicted, what its trial measured, and whether it stayed and by what (its
trial, a cascade from another revert, or by hand). Read from the change records (manifests/
record.py), never recomputed; status (short forms) and the report (long forms) open with it."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from evoharness.text import counted
from evoharness.manifests.record import PENDING, ChangeRecord
from evoharness.manifests.schema import ChangeManifestEntry


class LineageRow(BaseModel):
    model_config = ConfigDict(frozen=True)

    iteration: int  # the iteration whose EVOLVE made it
    change_id: str
    component: str
    fixes: dict[str, float]  # predicted fixes: task -> stated probability
    regressions: dict[str, float]  # predicted regressions
    expected_delta: float  # pass-rate points the change expected
    tried: bool  # its trial ran
    gain: float | None = None  # the trial's mean gain on its predicted tasks (None: no pair)
    paired: int = 0  # predicted tasks the trial paired
    wins: int = 0
    losses: int = 0
    p_value: float | None = None
    regressed: list[str] = []  # stable tasks its trial saw fall
    validation: str | None = None  # its validation test: shown, not_shown, untestable, not_run;
    # None when the run has no validation tasks (judged on its predicted tasks only)
    validation_wins: int = 0
    validation_losses: int = 0
    validation_p: float | None = None
    outcome: str  # effective, not_shown, not_carried, regression, untestable, manual or pending
    decision: str  # keep, revert or pending
    by: str  # its trial, a cascade from CHANGE, by hand, not judged yet

    def prediction(self, short: bool = False) -> str:
        """"fix alpha p=0.70; regress beta p=0.20 (+5 points)"; short: "alpha .70, -beta .20"."""
        if short:
            parts = [f"{t} {_short(p)}" for t, p in self.fixes.items()]
            parts += [f"-{t} {_short(p)}" for t, p in self.regressions.items()]
            return ", ".join(parts) or "-"
        return f"{_claims(self.fixes, self.regressions)} ({self.expected_delta:+g} points)"

    def effect(self, short: bool = False) -> str:
        """"+50.0 points on 1 task (3 wins, 0 losses; p = 0.0123); regressed beta"; short:
        "+50 p=0.012" (the tasks it regressed are status's to show, on their own line)."""
        if not self.tried:
            return "not decided yet" if self.decision == PENDING else "not tried"
        if short:
            gain = "no pair" if self.gain is None else f"{100 * self.gain:+.0f}"
            return f"{gain} p={_short(self.p_value, 3)}{self._validation(short)}"
        gain = "no pair ran" if self.gain is None else (
            f"{100 * self.gain:+.1f} points on {counted(self.paired, 'task')}")
        fell = f"; regressed {', '.join(self.regressed)}" if self.regressed else ""
        return (f"{gain} ({counted(self.wins, 'win')}, {counted(self.losses, 'loss', 'losses')}; "
                f"p = {self.p_value:.4f}){self._validation(short)}{fell}")

    def _validation(self, short: bool) -> str:
        """" val=.004" / " val -"; long: "; validation shown (4 wins, 0 losses; p = 0.0040)";
        nothing in a run without validation tasks."""
        if self.validation is None:
            return ""
        if short:
            return f" val={_short(self.validation_p, 3)}" if self.validation_p is not None \
                else " val -"
        if self.validation_p is None:
            return f"; validation {self.validation.replace('_', ' ')}"
        return (f"; validation {self.validation.replace('_', ' ')} "
                f"({counted(self.validation_wins, 'win')}, "
                f"{counted(self.validation_losses, 'loss', 'losses')}; p = {self.validation_p:.4f})")

    def decided_by(self, short: bool = False) -> str:
        """What decided it: "its trial", "a cascade from c0-x", "by hand"; short: "trial",
        "cascade from c0-x", "hand"."""
        if not short:
            return self.by
        if self.decision == PENDING:
            return "-"
        return self.by.removeprefix("its ").removeprefix("a ").removeprefix("by ")


def lineage(records: list[ChangeRecord]) -> list[LineageRow]:
    return [_row(r) for r in records]


def prediction_text(change: ChangeManifestEntry) -> str:
    """"fix alpha p=0.70; regress beta p=0.20" (or "nothing predicted")."""
    return _claims({p.task_id: p.probability for p in change.predicted_fixes},
                   {p.task_id: p.probability for p in change.predicted_regressions})


def _claims(fixes: dict[str, float], regressions: dict[str, float]) -> str:
    parts = [f"fix {t} p={p:.2f}" for t, p in fixes.items()]
    parts += [f"regress {t} p={p:.2f}" for t, p in regressions.items()]
    return "; ".join(parts) or "nothing predicted"


def _short(probability: float, digits: int = 2) -> str:
    """0.70 -> ".70" (1.00 stays)."""
    text = f"{probability:.{digits}f}"
    return text[1:] if text.startswith("0") else text


def _row(record: ChangeRecord) -> LineageRow:
    entry, judgement = record.entry, record.judgement
    tried = {}
    if judgement is not None:
        verdict = judgement.verdict
        tried = dict(gain=verdict.effect, paired=len(verdict.gains), wins=verdict.wins,
                     losses=verdict.losses, p_value=verdict.p_value,
                     regressed=judgement.regressions)
        if (check := verdict.validation) is not None:
            ran = check.result in ("shown", "not_shown")
            tried |= dict(validation=check.result, validation_wins=check.wins,
                          validation_losses=check.losses,
                          validation_p=check.p_value if ran else None)
    return LineageRow(
        iteration=record.iteration, change_id=entry.id, component=entry.component,
        fixes={p.task_id: p.probability for p in entry.predicted_fixes},
        regressions={p.task_id: p.probability for p in entry.predicted_regressions},
        expected_delta=entry.expected_delta, tried=judgement is not None, **tried,
        outcome=record.verdict, decision=record.decision, by=_decided_by(record))


def _decided_by(record: ChangeRecord) -> str:
    revert = record.revert
    if revert is not None and revert.manual:
        return "by hand"
    if revert is not None and revert.cascaded_from:
        return f"a cascade from {revert.cascaded_from}"
    if record.judgement is not None:
        return "its trial"
    return "by hand" if revert is not None else "not judged yet"
