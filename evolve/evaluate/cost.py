"""What an evolution spent, as its exam states it beside its gain: every rollout of the run
(evaluations, train and held-out, and trials), the code and evolve agents' tokens, and the
hours it worked, read from the run's trace store and phase records. The matched-budget
baseline (best_of.py) takes its default N from it."""
from __future__ import annotations

from evoharness.traces.queries import run_spend

from ..ledger.records import ROLLING, EvolutionCost, EvolveResult
from ..run import Run


def evolution_cost(run: Run) -> EvolutionCost:
    """The run's spend so far. Tokens: every rollout's plus every evolve session's (the stop
    rule's count); hours: the time its rollouts ran (across every process that ran them) plus
    the phases that run none (the evolve sessions, ingesting, reverting)."""
    with run.ledger.reading() as store:
        spend = run_spend(store.con, run.run_id)
    records = run.ledger.phase_records()
    evolve_tokens = sum(r.result.tokens for r in records if isinstance(r.result, EvolveResult))
    other = sum(r.seconds for r in records if r.phase not in ROLLING)
    return EvolutionCost(rollouts=spend.rollouts, train_rollouts=spend.train_rollouts,
                         train_tasks=len(run.train_ids), tokens=spend.tokens + evolve_tokens,
                         hours=(spend.busy_seconds + other) / 3600)
