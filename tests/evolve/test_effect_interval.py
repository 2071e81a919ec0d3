"""The intervals a trial's effect is printed with, on verdicts of the real trial
(manifests/trial.py): the one it is filed with (evolve/library/filing.py `effect_interval`), the
pair interval at 1 - alpha / L for the probe's L possible looks, so it holds at the look the trial
stopped at; and benchmarks/remedies.py's, the plain pair interval over the probe run on to its
cap (evolve/trials.py `probe_pairs_to_cap`), which holds because that size was fixed before."""
from __future__ import annotations

import math
import random

from evoharness.evolve.evaluate.compare import pair_interval, pair_interval_of_counts
from evoharness.evolve.library.filing import effect_interval
from evoharness.manifests.design import TrialDesign
from evoharness.manifests.history import TaskCounts, TreeHistory
from evoharness.manifests.probe import ProbeOutcomes
from evoharness.manifests.trial import Trial
from evoharness.manifests.verdict import TrialVerdict

from tests.manifests.builders import change

TASKS = [f"t{i}" for i in range(6)]
HISTORY = TreeHistory(tree="tree-base", counts={t: TaskCounts(passes=0, total=2) for t in TASKS})
DESIGN = TrialDesign(max_rollouts=72)  # 6 tasks, one pair each a look: at most 6 looks
CAP = 6  # pairs a task at the probe's cap
Drawn = dict[str, dict[str, list[bool]]]


def verdict_of(tasks: list[tuple[float, float, float]], rng: random.Random,
               drawn: Drawn | None = None) -> TrialVerdict:
    """The trial of a change predicting all six tasks, each (base pass rate, the chance the
    change rescues a failed base rollout, the chance it loses a passed one), stepped until it
    decides; the pairs share their chance as a reproducible server's do. `drawn` keeps them."""
    trial = Trial(change("c1", fixes={t: 0.5 for t in TASKS}), HISTORY, DESIGN)
    drawn = {"base": {}, "change": {}} if drawn is None else drawn
    while (step := trial.step(ProbeOutcomes(**drawn))).verdict is None:
        for task in sorted({r.task_id for r in step.requests}):
            for _ in range(next(r.count for r in step.requests if r.task_id == task)):
                draw_pair(tasks, task, rng, drawn)
    return step.verdict


def draw_pair(tasks: list[tuple[float, float, float]], task: str, rng: random.Random,
              drawn: Drawn) -> None:
    p, rescue, loss = tasks[TASKS.index(task)]
    base = rng.random() < p
    drawn["base"].setdefault(task, []).append(base)
    drawn["change"].setdefault(task, []).append(
        rng.random() >= loss if base else rng.random() < rescue)


def test_the_interval_is_the_pair_interval_of_the_deciding_look_at_the_looks_level():
    v = verdict_of([(0.0, 1.0, 0.0)] * 3 + [(1.0, 0.0, 0.0)] * 3, random.Random(1))
    interval = effect_interval(v)
    pairs = sum(t.base_counts.total for t in v.tasks)
    assert v.decision == "keep" and v.wins == pairs // 2 and v.losses == 0
    # Every rescue is a win; the other half of the pairs passed on both arms.
    assert interval == pair_interval_of_counts(pairs // 2, pairs // 2, 0, 0,
                                               confidence=1 - 0.05 / 6)
    assert interval.mean == v.effect == 0.5 and 0 < interval.lo < 0.5 < interval.hi < 1


def test_an_untestable_change_has_no_interval():
    trial = Trial(change("c1"), HISTORY, DESIGN)
    assert effect_interval(trial.step(ProbeOutcomes()).verdict) is None


def test_the_interval_holds_the_true_gain_at_whatever_look_the_trial_stopped():
    """400 simulated trials of six tasks (base pass rates 0-0.6, rescues 0-50%, losses 0-5%), each
    stopped by the trial's own rule, a gain stopping it as early as it shows: the interval should
    hold the true mean gain over the six tasks at least 95% of the time, among the kept changes
    too (Bonferroni over the six looks errs above: 99.25% and 100% of 208 with this seed);
    allowed: 95% less three binomial standard errors."""
    rng = random.Random(7)
    covered, covered_kept, kept = 0, 0, 0
    for _ in range(400):
        tasks = [(rng.uniform(0, 0.6), rng.uniform(0, 0.5), rng.uniform(0, 0.05)) for _ in TASKS]
        truth = sum((1 - p) * rescue - p * loss for p, rescue, loss in tasks) / len(tasks)
        v = verdict_of(tasks, rng)
        interval = effect_interval(v)
        holds = interval.lo <= truth <= interval.hi
        covered += holds
        kept += v.decision == "keep"
        covered_kept += holds and v.decision == "keep"
    assert 100 <= kept <= 300  # both early stops for a gain and reverts are in the sample
    assert covered / 400 >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / 400)
    assert covered_kept / kept >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / kept)


def test_over_the_probe_run_on_to_its_cap_the_plain_interval_holds_whatever_was_decided():
    """The same 400 simulated trials, each probe then run on to its cap of 6 pairs a task (the
    trial's own pairs kept, as `probe_pairs_to_cap` keeps them): the 95% pair interval over those
    36 pairs should hold the true mean gain at least 95% of the time, since their number was fixed
    before any was drawn (with this seed: 96.0%, and 99.5% of the 214 kept). Allowed: 95% less
    three binomial standard errors. It is mostly narrower than the interval valid at every look
    (398 of 400 here), which is the point of running on."""
    rng = random.Random(7)
    covered, covered_kept, kept, narrower = 0, 0, 0, 0
    for _ in range(400):
        tasks = [(rng.uniform(0, 0.6), rng.uniform(0, 0.5), rng.uniform(0, 0.05)) for _ in TASKS]
        truth = sum((1 - p) * rescue - p * loss for p, rescue, loss in tasks) / len(tasks)
        drawn: Drawn = {"base": {}, "change": {}}
        v = verdict_of(tasks, rng, drawn)
        for task in TASKS:
            while len(drawn["base"].get(task, [])) < CAP:
                draw_pair(tasks, task, rng, drawn)
        pairs = [pair for t in TASKS for pair in zip(drawn["base"][t], drawn["change"][t])]
        interval = pair_interval(pairs, confidence=0.95)
        holds = interval.lo <= truth <= interval.hi
        covered += holds
        kept += v.decision == "keep"
        covered_kept += holds and v.decision == "keep"
        at_look = effect_interval(v)
        narrower += interval.hi - interval.lo < at_look.hi - at_look.lo
    assert 100 <= kept <= 300 and narrower >= 0.9 * 400
    assert covered / 400 >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / 400)
    assert covered_kept / kept >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / kept)


def test_a_validation_test_is_filed_beside_the_predicted_one_with_its_own_numbers():
    from evoharness.evolve.library.filing import trial_numbers
    from tests.manifests.builders import judge

    # alpha: won every pair; v1 and v2 (validation): the change wins alternate pairs
    j = judge(change("c1", fixes={"alpha": 0.7}), "alpha=0/2 beta=4/4",
              base={"alpha": "0", "v1": "0", "v2": "0"}, change={"v1": "10", "v2": "10"},
              validation=["v1", "v2"])
    v = j.verdict
    assert (v.decision, v.predicted.result, v.validation.result) == ("keep", "shown", "shown")
    predicted = trial_numbers(j, "effective", v.reason)
    checked = trial_numbers(j, "effective", v.reason, "validation")
    assert predicted.effect == 1.0 and predicted.p_value == v.p_value
    pairs, wins = v.validation.pairs, v.validation.wins
    assert v.validation.losses == 0 and checked.effect == wins / pairs
    assert checked.p_value == v.validation.p_value
    # at the looks of the longer design of a run with validation tasks: 150 rollouts, a pair of
    # each of the two tasks a look (4 rollouts), so 37 looks
    assert checked.confidence == 1 - 0.05 / (150 // 4)
    assert checked.lo < checked.effect < checked.hi
