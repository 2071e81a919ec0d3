"""benchmarks/exam.py with measured pass rates: reading a record of per-task rates (JSON, or what
benchmarks/suite.py printed), refusing a bad one, and the power it prints, which must follow the
rates it is given: high where every task sits mid-band, nothing where every task is always passed."""
from __future__ import annotations

import inspect
import json
import random

import pytest

from benchmarks import exam
from benchmarks.suite import TaskRate, table
from evoharness.errors import EvoError
from evoharness.evolve.cli.run import init


def test_the_exam_default_k_is_the_cli_default():
    assert exam.EXAM_K == inspect.signature(init).parameters["exam_k"].default.default == 4


def test_rates_from_json_in_both_shapes(tmp_path):
    plain = tmp_path / "rates.json"
    plain.write_text(json.dumps({"a": 0.25, "b": 1}))
    assert exam.measured_rates(plain) == {"a": 0.25, "b": 1.0}
    counted = tmp_path / "counts.json"
    counted.write_text(json.dumps({"rates": {"a": {"passes": 1, "total": 4}, "b": {"passes": 0,
                                                                                  "total": 2}}}))
    assert exam.measured_rates(counted) == {"a": 0.25, "b": 0.0}


def test_rates_from_what_suite_py_printed(tmp_path):
    rows = [TaskRate(task_id="csv-sum-3", split="train", difficulty="one-step", category="csv-json",
                     passes=3, total=4, lo=0.3, hi=0.95),
            TaskRate(task_id="top-ips", split="heldout", difficulty="medium",
                     category="log-analysis", passes=0, total=4, lo=0.0, hi=0.49),
            TaskRate(task_id="copy-files-2", split="validation", difficulty="one-step",
                     category="file-operations", passes=2, total=8, lo=0.07, hi=0.59)]
    record = tmp_path / "suite.txt"
    record.write_text("\n".join(table(rows)) + "\ntasks_measured: 3 tasks\n")
    assert exam.measured_rates(record) == {"csv-sum-3": 0.75, "top-ips": 0.0, "copy-files-2": 0.25}


@pytest.mark.parametrize("text,where", [('{"a": 1.5}', "a"), ('{"a": "half"}', "a"), ("[1", "JSON")])
def test_a_bad_record_is_refused_naming_it(tmp_path, text, where):
    record = tmp_path / "rates.json"
    record.write_text(text)
    with pytest.raises(EvoError) as caught:
        exam.measured_rates(record)
    assert "rates.json" in str(caught.value) and where in str(caught.value)


def test_power_follows_the_measured_rates():
    rng = random.Random(3)
    mid = [0.5] * 60
    assert exam.simulate_measured(mid, 4, 0.2, 150, rng) > 0.9
    assert exam.simulate_measured(mid, 4, 0.0, 150, rng) < 0.1
    # a task always passed cannot show a gain: the exam never calls such a B better
    assert exam.simulate_measured([1.0] * 60, 4, 0.2, 50, rng) == 0.0


def test_main_prints_power_at_10_and_20_points_on_the_heldout_tasks(tmp_path, capsys):
    from evoharness.tasks.task import load_suite

    heldout = load_suite(exam.SUITE).heldout
    record = tmp_path / "rates.json"
    record.write_text(json.dumps({task: 0.5 for task in heldout[:40]} | {"not-a-task": 0.1}))
    assert exam.main(["--rates", str(record), "--trials", "40"]) == 0
    shown = dict(line.split(": ", 1) for line in capsys.readouterr().out.splitlines())
    assert shown["tasks_measured_heldout"] == "40 tasks"
    assert shown["tasks_unmeasured_heldout"] == f"{len(heldout) - 40} tasks"
    assert shown["mean_pass_rate_heldout"] == "50.0 %"
    for gain in (10, 20):
        power = float(shown[f"power_gain{gain}_measured_k{exam.EXAM_K}"].removesuffix(" %"))
        assert 0 <= power <= 100
    assert float(shown[f"power_gain20_measured_k{exam.EXAM_K}"].removesuffix(" %")) > 50
