"""The report's data, its HTML and the `report` / `diff` commands on recorded run directories
(tests/fixtures/recorded_run.py): a full run, one with only reverted changes, one with none."""
from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from evoharness.evolve.cli import app, main
from evoharness.evolve.report.build import render_report
from evoharness.evolve.report.data import collect
from tests.fixtures.recorded_run import CHANGES, SCENARIOS, build_recorded_run, record_exam

runner = CliRunner()
FIGURES = ("pass-rate", "task-heatmap", "verdicts", "prediction-scores", "cost")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    return {name: build_recorded_run(root / name, name) for name in SCENARIOS}


def _points(html: str) -> dict[str, int]:
    found = re.findall(r'id="fig-([a-z-]+)" data-points="(\d+)"', html)
    return {name: int(n) for name, n in found}


def test_full_run_data_matches_the_recording(runs):
    data = collect(runs["full"])
    assert (data.run_id, data.model, data.k) == ("recorded", "ollama:scripted", 2)
    assert data.iterations == [0, 1, 2]
    summary = data.summary()
    assert (summary["kept"], summary["reverted"], summary["pending"]) == (1, 3, 1)
    assert summary["placebos"] == {"n": 1, "kept": 0}
    assert summary["best"] == {"rate": 1.0, "iteration": 2}
    heat = {row.task_id: (row.split, row.rates) for row in data.heat}
    assert heat["delta"] == ("heldout", [0.0, 0.5, 1.0])
    assert [row.task_id for row in data.heat] == ["alpha", "beta", "gamma", "delta"]
    assert data.verdict_counts() == {0: {"effective": 1, "not_shown": 1},
                                     1: {"not_shown": 1, "regression": 1}}
    assert data.revert_share(0) == 0.5 and data.revert_share(1) == 1.0
    # c0-prompt's alpha fixed, c0-memory's gamma showed no gain; c1-tool's beta fell as predicted
    assert data.scores[0].fix_precision == 0.5 and data.scores[1].reg_precision == 1.0


def test_change_rows_carry_prediction_outcome_and_diff(runs):
    rows = {row.change_id: row for row in collect(runs["full"]).changes}
    assert list(rows) == list(CHANGES)
    tool = rows["c1-tool"]
    assert tool.prediction == "fix gamma p=0.60; regress beta p=0.20"
    assert (tool.verdict, tool.decision, tool.regressions) == ("regression", "revert", ["beta"])
    assert tool.revert_commit and "+description: c1-tool recorded edit." in tool.diff
    # placebo is evolve/placebo.py's label of the fixture's commits: only the harness.yaml comment
    assert [r.change_id for r in rows.values() if r.placebo] == ["c1-placebo"]
    assert "+# c1-placebo: a recorded edit" in rows["c1-placebo"].diff
    assert rows["c2-memory"].decision == "pending"


def test_full_report_has_every_plot_row_and_diff(runs):
    data = collect(runs["full"])
    html = render_report(data)
    points = _points(html)
    assert list(points) == list(FIGURES)
    assert all(points.values()), points
    for row in data.changes:
        assert f'id="change-{row.change_id}"' in html
        assert f'href="#diff-{row.commit}"' in html and f'<details id="diff-{row.commit}">' in html
    assert 'id="false-accept"' in html
    # Self-contained: plotly.js is inlined once, nothing is fetched.
    assert "<script src" not in html and html.count("plotly.js v") >= 1


def test_the_report_shows_where_each_iteration_s_model_time_went(runs):
    data = collect(runs["full"])
    rollouts = {t.iteration: t.rollouts + t.trial_rollouts for t in data.totals}
    first = data.model_time[0]
    assert first.tokens_read == 300 * rollouts[0] and first.hit_rate == 600 / 900
    assert first.decode_s == 4.0 * rollouts[0] and first.stalled_calls > 0
    html = render_report(data)
    table = html[html.index('id="model-time-table"'):]
    table = table[:table.index("</table>")]
    assert table.count("<tr><td>") == len(data.totals)
    assert f"<td>{first.tokens_read:,}</td>" in table and "<td>67%</td>" in table


def test_report_escapes_text_from_the_run(runs):
    data = collect(runs["full"])
    evil = data.changes[0].model_copy(update={"targeted_fix": "<img src=x onerror=alert(1)>"})
    html = render_report(data.model_copy(update={"changes": [evil]}))
    assert "&lt;img src=x onerror=alert(1)&gt;" in html and "<img src=x" not in html


def test_run_without_changes_renders(runs):
    html = render_report(collect(runs["empty"]))
    points = _points(html)
    assert points["verdicts"] == 0 and points["prediction-scores"] == 0
    assert points["pass-rate"] == 6 and points["task-heatmap"] == 12
    assert 'id="no-changes"' in html and 'id="false-accept"' not in html


def test_run_with_only_reverted_changes_renders(runs):
    data = collect(runs["reverted"])
    assert {row.decision for row in data.changes} == {"revert"}
    html = render_report(data)
    assert html.count('class="change revert"') == 3 and all(_points(html).values())


def test_report_command_writes_the_default_file(runs, tmp_path):
    result = runner.invoke(app, ["report", str(runs["empty"])])
    assert result.exit_code == 0, result.output
    assert (runs["empty"] / "report.html").stat().st_size > 1_000_000  # plotly.js is inside
    out = tmp_path / "r.html"
    assert runner.invoke(app, ["report", str(runs["full"]), "--out", str(out)]).exit_code == 0
    assert 'id="change-c0-prompt"' in out.read_text()


def test_diff_command_shows_change_prediction_and_verdict(runs):
    rows = {row.change_id: row for row in collect(runs["full"]).changes}
    result = runner.invoke(app, ["diff", str(runs["full"]), rows["c1-tool"].commit[:8]])
    assert result.exit_code == 0, result.output
    for text in ("fix gamma p=0.60", "regression -> revert",
                 "+description: c1-tool recorded edit."):
        assert text in result.output
    shown = runner.invoke(app, ["diff", str(runs["full"]), "c0-prompt", "--json"])
    as_json = json.loads(shown.output)
    assert as_json["decision"] == "keep" and as_json["commit"] == rows["c0-prompt"].commit


def test_diff_of_a_commit_without_manifest(runs):
    result = runner.invoke(app, ["diff", str(runs["full"]), "seed", "--json"])
    shown = json.loads(result.output)
    assert shown["change"] is None and "+name: seed" in shown["diff"]


def test_diff_of_an_unknown_commit_is_a_clear_error(runs, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["diff", str(runs["full"]), "no-such-commit"])
    assert exit_info.value.code == 2
    assert "unknown commit" in capsys.readouterr().err


def test_the_report_opens_with_the_answer_then_the_path(tmp_path):
    """The morning view: before the summary tiles and the plots, the exam's answer (final vs
    seed, vs the matched-budget baseline, what the evolution cost) and one row per change."""
    run = build_recorded_run(tmp_path / "run")
    exam = record_exam(run)
    html = render_report(collect(run))
    answer, path, tiles = (html.index(f'id="{i}"') for i in ("answer", "lineage", "summary"))
    assert answer < path < tiles < html.index('id="fig-pass-rate"')
    first = html[answer:tiles]
    assert 'class="verdict better" data-a="seed" data-b="final"' in first
    assert "final vs seed: better by +60.9 points [+36.8, +85.1]" in first
    assert 'data-a="best-of-8" data-b="final">final vs seed best-of-8: no difference shown' in first
    assert "the evolution spent 32 rollouts, 181,000 tokens, 2.5 hours" in first
    assert "256 rollouts, 812,000 tokens, 96 picker calls" in first  # the baseline's cost
    assert exam.against_baseline.verdict == "no difference shown"
    rows = re.findall(r'<tr class="(\w+)" id="path-([\w-]+)">(.*?)</tr>', first, re.DOTALL)
    assert [(decision, change) for decision, change, _ in rows] == [
        ("keep", "c0-prompt"), ("revert", "c0-memory"), ("revert", "c1-placebo"),
        ("revert", "c1-tool"), ("pending", "c2-memory")]
    tool = rows[3][2]
    assert "fix gamma p=0.60; regress beta p=0.20 (+5 points)" in tool
    assert "+100.0 points on 1 task (6 wins, 0 losses; p = 0.0348); regressed beta" in tool
    assert "<td>its trial</td>" in tool
    assert "The path: 5 changes, 1 kept" in first


def test_without_an_exam_or_changes_the_first_screen_says_so(runs):
    html = render_report(collect(runs["empty"]))
    assert 'id="no-exam"' in html and "No final exam yet" in html
    assert "The path: 0 changes, 0 kept" in html and 'id="no-path"' in html
