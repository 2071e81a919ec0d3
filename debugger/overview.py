"""The overview layer: suite-level numbers, the task table, failure patterns and classes and the
trials' scoreboard, kept under MAX_CHARS by cutting the least informative rows and saying what was
cut.

The numbers come from debugger/queries.py; the task files are written by debugger/distill.py; the
scoreboard arrives rendered (the run ledger's one Scoreboard, manifests/scores.py).
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from evoharness.debugger.model_time import ModelTime
from evoharness.debugger.patterns import Pattern
from evoharness.debugger.render import cell, number, pct, render, signed

MAX_CHARS = 40_000  # about 10k tokens at 4 characters a token
TOP_CLASSES = 10  # failure classes listed per kind
CUT_NOTE_ROOM = 300  # characters reserved for the "+ N more tasks" line


def category(t: dict[str, Any]) -> str:
    if t["delta"]:
        return "changed"
    if t["passes"] < t["k"]:
        return "failing" if t["stable"] else "failing unstably"
    return "passing stably" if t["stable"] else "passing unstably"


def priority(t: dict[str, Any]) -> tuple:
    """Changed tasks first (biggest moves first), then failing ones (worst first), then the rest."""
    order = ["changed", "failing", "failing unstably", "passing unstably", "passing stably"]
    return (order.index(category(t)), -abs(t["delta"] or 0), t["p1"], t["task_id"])


def task_row(t: dict[str, Any], link: str) -> str:
    stability = "stable" if t["stable"] else "unstable"
    return (
        f"| [{cell(t['task_id'])}]({link}) | {pct(t['p1'])} | {t['passes']}/{t['k']} "
        f"| {signed(t['delta'])} | {stability} | {number(t['tokens'])} | {t['seconds']:.1f} |"
    )


def fit_rows(rows: list[str], budget: int) -> int:
    """How many leading rows fit in `budget` characters (one newline each)."""
    used = 0
    for n, row in enumerate(rows):
        used += len(row) + 1
        if used > budget:
            return n
    return len(rows)


def cut_note(cut: list[dict[str, Any]]) -> str:
    if not cut:
        return ""
    counts = Counter(category(t) for t in cut)
    parts = ", ".join(f"{n} {what}" for what, n in sorted(counts.items(), key=lambda kv: -kv[1]))
    return f"+ {len(cut)} more tasks ({parts}); see tasks/"


def top(items: list[Any], what: str) -> tuple[list[Any], str]:
    cut = len(items) - TOP_CLASSES
    return items[:TOP_CLASSES], (f"+ {cut} more {what}" if cut > 0 else "")


def totals(tasks: list[dict[str, Any]], rollouts: list[dict[str, Any]]) -> dict[str, Any]:
    compared = [t for t in tasks if t["prev_p1"] is not None]
    p1 = sum(t["p1"] for t in tasks) / len(tasks) if tasks else 0.0
    prev = sum(t["prev_p1"] for t in compared) / len(compared) if compared else None
    now = sum(t["p1"] for t in compared) / len(compared) if compared else None
    return {
        "tasks": len(tasks), "rollouts": len(rollouts), "p1": p1, "prev_p1": prev,
        "delta": None if prev is None else now - prev,
        "all_pass": sum(t["passes"] == t["k"] for t in tasks),
        "partial": sum(0 < t["passes"] < t["k"] for t in tasks),
        "zero": sum(t["passes"] == 0 for t in tasks),
        "stable": sum(bool(t["stable"]) for t in tasks),
        "unstable": sum(not t["stable"] for t in tasks),
        "tokens": sum(r["tokens"] for r in rollouts),
        "seconds": sum(r["duration_s"] for r in rollouts),
    }


def build_overview(
    *, head: dict[str, Any], tasks: list[dict[str, Any]], links: dict[str, str],
    classes: dict[str, list[dict[str, Any]]], scoreboard: str | None,
    patterns: Sequence[Pattern] = (), model_time: ModelTime,
) -> str:
    """Render the overview; `head` holds run_id, iteration, previous, total and analyst;
    `scoreboard` is the trials' scoreboard as markdown (bounded by its renderer);
    `patterns` (debugger/patterns.py) are listed whole: there are at most a handful;
    `model_time` (debugger/model_time.py) lists a bounded few outputs."""
    exits, exits_cut = top(classes["exits"], "exit reasons")
    errors, errors_cut = top(classes["errors"], "error classes")
    verifier, verifier_cut = top(classes["verifier"], "verifier lines")
    context = dict(
        head, patterns=list(patterns), exits=exits, exits_cut=exits_cut, errors=errors,
        errors_cut=errors_cut,
        verifier=verifier, verifier_cut=verifier_cut, scoreboard=scoreboard,
        model_time=model_time,
    )
    ordered = sorted(tasks, key=priority)
    rows = [task_row(t, links[t["task_id"]]) for t in ordered]
    fixed = len(render("overview.md.j2", **context, task_rows="", cut=""))
    n = fit_rows(rows, MAX_CHARS - fixed - CUT_NOTE_ROOM)
    return render(
        "overview.md.j2", **context, task_rows="\n".join(rows[:n]), cut=cut_note(ordered[n:])
    )
