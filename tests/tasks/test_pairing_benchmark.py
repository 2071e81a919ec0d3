"""benchmarks/pairing.py with a model that writes its sampling seed into its reply: the arms of a
pair with common seeds reply alike, call by call, and with independent seeds never, through the
real executor and sandbox, on train and held-out tasks alike; the report counts what it says.
With an entry, only the change arm runs it, and each arm's model time is reported; a bad option
is refused before anything runs."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from evoharness.agent.clients.scripted import json_action
from evoharness.agent.model import ModelReply
from benchmarks.pairing import first_reply, report, run_pairs, with_entry
from benchmarks.pairing import ways as pairing_ways
from evoharness.tasks.executor import HarnessTree, LocalExecutor
from evoharness.tasks.runner import require_sandbox
from evoharness.tasks.task import load_suite
from evoharness.workspace.repo import HarnessRepo

from .conftest import needs_bwrap

pytestmark = needs_bwrap
SUITE = Path(__file__).resolve().parents[1] / "fixtures" / "e2e_suite"


class SeedWriter:
    """Writes its first call's seed to the task's output (so no task passes), then is done."""

    name = "seed-writer"
    constrains_by_default = False

    def chat(self, messages, *, seed=None, **options) -> ModelReply:
        first = not any(m.role == "assistant" for m in messages)
        content = (json_action("shell", command=f"echo {seed}") if first
                   else json_action("done", summary=f"seed {seed}"))
        return ModelReply(content=content, tokens_in=1, tokens_out=1)


def test_common_seeds_pair_the_arms_call_by_call_and_independent_ones_do_not(tmp_path, capsys):
    tasks = [(task, split) for task, split in load_suite(SUITE).items()
             if task.id in ("write-alpha", "write-gamma")]  # a train and a held-out task
    repo = HarnessRepo.create(tmp_path / "seed")
    executor = LocalExecutor(workers=2, rollout_timeout=None, sandbox_factory=require_sandbox(),
                             model_factory=lambda spec: SeedWriter())
    out = tmp_path / "rollouts"
    out.mkdir()
    seed = HarnessTree.at(repo, "seed")
    ways = run_pairs(executor, tasks, seed, seed, "seed-writer", range(2), out,
                     pairing_ways(None))
    assert {way: len(pairs) for way, pairs in ways.items()} == {"common": 4, "independent": 4}
    tasks_split = {task.id: split for task, split in tasks}
    assert sorted(tasks_split.values()) == ["heldout", "train"]
    for way, pairs in ways.items():
        for base, change in pairs:
            assert (base.trial_arm, change.trial_arm, base.task_id) == ("base", "change",
                                                                       change.task_id)
            assert base.split == change.split == tasks_split[base.task_id]
            calls = [[e.content for e in r.events if e.kind == "model_call"]
                     for r in (base, change)]
            assert len(calls[0]) == len(calls[1]) == 2
            assert (calls[0] == calls[1]) == (way == "common")
    report("common", ways["common"])
    report("independent", ways["independent"])
    printed = capsys.readouterr().out
    assert "first_reply_same_common: 4/4 pairs" in printed
    assert "first_reply_same_independent: 0/4 pairs" in printed
    assert "discordant_common: 0/4 pairs" in printed
    assert "aa_gain_common: +0.0 [" in printed and "points over 2 tasks (95%)" in printed
    assert "aa_gain_pairs_common: +0.0 [" in printed
    assert "points over 4 pairs (95%, these tasks)" in printed
    assert "sign_test_common: 0 wins, 0 losses, p = 1 (exact, one-sided)" in printed
    assert len(list(out.glob("*.json"))) == 16
    again = run_pairs(executor, tasks, seed, seed, "seed-writer", range(2), out,
                     pairing_ways(None))
    assert again == ways  # a run started again reads what is there and runs nothing new
    later = run_pairs(executor, tasks, seed, seed, "seed-writer", range(2, 3), out,
                      pairing_ways(None, ["common"]))["common"]
    assert {base.attempt for base, _ in later} == {2}  # fresh attempts: fresh seeds
    seeds = {first_reply(base) for pairs in (ways["common"], later) for base, _ in pairs}
    assert len(seeds) == 6


class PromptReader:
    """Says whether its system prompt asks for a thought, then is done."""

    name = "prompt-reader"
    constrains_by_default = False

    def chat(self, messages, **options) -> ModelReply:
        if any(m.role == "assistant" for m in messages):
            return ModelReply(content=json_action("done", summary="ok"), tokens_in=1, tokens_out=2)
        asks = '"thought"' in messages[0].content
        return ModelReply(content=json_action("shell", command=f"echo thought={asks}"),
                          tokens_in=1, tokens_out=4)


def test_an_entry_runs_in_the_change_arm_only_and_each_arm_reports_its_model_time(
        tmp_path, capsys):
    tasks = load_suite(SUITE).items()[:2]
    repo = HarnessRepo.create(tmp_path / "seed")
    seed, terse = HarnessTree.at(repo, "seed"), with_entry(repo, "terse-actions")
    assert with_entry(repo, "terse-actions") == terse  # a run started again reuses the commit
    executor = LocalExecutor(workers=2, rollout_timeout=None, sandbox_factory=require_sandbox(),
                             model_factory=lambda spec: PromptReader())
    out = tmp_path / "rollouts"
    out.mkdir()
    pairings = pairing_ways("terse-actions", ["common"])
    ways = run_pairs(executor, tasks, seed, terse, "prompt-reader", range(1), out, pairings)
    [pairs] = ways.values()
    for base, change in pairs:
        commands = [[e.content for e in r.events if e.kind == "tool_result"][0]
                    for r in (base, change)]
        assert ("thought=True" in commands[0], "thought=False" in commands[1]) == (True, True)
        assert (base.harness_commit, change.harness_commit) == (seed.commit, terse.commit)
    report("common", pairs, "gain")
    printed = capsys.readouterr().out
    assert "gain_common: +0.0 [" in printed
    assert "tokens_out_common: base 3.0, change 3.0 tokens a call, ratio 1.00" in printed
    assert "model_calls_common: base 2.0, change 2.0 a rollout" in printed
    assert "decode_s_common: n/a" in printed  # the double reports no server timings


def test_an_unknown_task_id_way_attempt_or_level_is_refused_before_anything_runs(tmp_path):
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "pairing.py"
    for option, value, said in [("--task-ids", "no-such-task", "no task no-such-task"),
                                ("--ways", "both", "--ways: both"),
                                ("--first-attempt", "-1", "attempts from 0"),
                                ("--confidence", "95", "a level between 0 and 1")]:
        done = subprocess.run([sys.executable, str(script), "--tasks", str(SUITE), "--dir",
                               str(tmp_path / "run"), option, value],
                              capture_output=True, text=True)
        assert done.returncode == 2 and said in done.stderr
    assert not (tmp_path / "run").exists()
