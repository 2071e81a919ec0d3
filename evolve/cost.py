"""What an evolution spent, as its exam states it beside its gain: every rollout of the run
(evaluations, train and held-out, and trials), the code and evolve agents' tokens, and the
phases' working hours, read from the run's trace store and phase records. The matched-budget
baseline (best_of.py) takes its default N from it."""
from __future__ import annotations

from traces.queries import run_spend

from .ledger.records import EvolutionCost, EvolveResult
from .run import Run


def evolution_cost(run: Run) -> EvolutionCost:
    """The run's spend so far. Tokens: every rollout's plus every evolve session's (the stop
    rule's count); hours: the sum of the finished phases' durations."""
    with run.ledger.reading() as store:
        spend = run_spend(store.con, run.run_id)
    records = run.ledger.phase_records()
    evolve_tokens = sum(r.result.tokens for r in records if isinstance(r.result, EvolveResult))
    return EvolutionCost(rollouts=spend.rollouts, train_rollouts=spend.train_rollouts,
                         train_tasks=len(run.train_ids), tokens=spend.tokens + evolve_tokens,
                         hours=sum(r.seconds for r in records) / 3600)
