"""distill() on a known set of traces: the numbers, the links, the divergence point."""
from __future__ import annotations

import re
from pathlib import Path

from evoharness.debugger.distill import distill
from evoharness.manifests.record import ChangeRecord
from evoharness.manifests.schema import ChangeManifestEntry, Prediction
from evoharness.manifests.scores import Scoreboard
from tests.debugger.conftest import RUN, call, output, shell
from tests.manifests.builders import judge

FAIL_TAIL = """============ FAILURES ============
    def test_add():
>       assert add(2, 2) == 5
E       assert 4 == 5
tests/test_outputs.py:7: AssertionError
FAILED tests/test_outputs.py::test_add - assert 4 == 5
1 failed in 0.1s"""


def build(traces) -> None:
    # iteration 1: alpha fails twice, beta passes twice, gamma passes twice
    for a in (1, 2):
        traces.rollout("alpha", a, "fail", iteration=1, verifier_tail=FAIL_TAIL)
        traces.rollout("beta", a, "pass", iteration=1)
        traces.rollout("gamma", a, "pass", iteration=1)
    # iteration 2: alpha 1 of 2 (diverges at the 2nd tool call), beta still passes, gamma fails
    common = [("model_call", "m", "look around", {}), shell("ls"), output("a.py")]
    traces.rollout("alpha", 1, "pass", iteration=2,
                   events=common + [shell("python fix.py"), output("fixed")])
    traces.rollout("alpha", 2, "fail", iteration=2, verifier_tail=FAIL_TAIL, exit_reason="max_steps",
                   events=common + [shell("rm -rf a.py"), ("error", "ToolTimeout", "took 30s", {})])
    for a in (1, 2):
        traces.rollout("beta", a, "pass", iteration=2, tokens=300, duration=4.0)
        traces.rollout("gamma", a, "fail", iteration=2, exit_reason="token_budget")


def test_overview_numbers(traces, tmp_path: Path) -> None:
    build(traces)
    index = distill(traces.con, RUN, 2, tmp_path, hidden_tasks=set())
    text = index.overview.read_text()
    assert "pass@1 **50%** over 3 tasks" in text  # (0.5 + 1 + 0) / 3
    assert "-17pp vs iteration 1 (67%)" in text  # (0 + 1 + 1) / 3 before
    assert re.search(r"\| \[alpha\]\(tasks/alpha.md\) \| 50% \| 1/2 \| \+50pp \| unstable", text)
    assert re.search(r"\| \[gamma\]\(tasks/gamma.md\) \| 0% \| 0/2 \| -100pp \| unstable", text)
    assert re.search(r"\| \[beta\]\(tasks/beta.md\) \| 100% \| 2/2 \| \+0pp \| stable \| 300 \| 4.0", text)
    assert "1 tasks pass every rollout, 1 partial-pass, 1 zero-pass" in text
    assert "1 stable (all pass or all fail so far), 2 unstable" in text
    assert "fail / `token_budget`: 2 rollouts in 1 tasks" in text
    assert "fail / `max_steps`: 1 rollouts in 1 tasks" in text
    assert "`ToolTimeout`: 1 events in 1 tasks" in text
    assert "1 rollouts in 1 tasks: `E       assert 4 == 5`" in text
    # changed tasks come before the stably passing one
    assert text.index("[gamma]") < text.index("[beta]") and text.index("[alpha]") < text.index("[beta]")


def test_a_changes_trial_rollouts_stay_out_of_the_evidence(traces, tmp_path: Path) -> None:
    """A trial runs other trees (the base and base + one change): its rollouts are neither the
    iteration's numbers nor rollout files the evolve agent reads as the head's."""
    build(traces)
    for a in range(4):
        traces.rollout("gamma", a, "pass", iteration=2, trial_change="c9", trial_arm="change")
        traces.rollout("beta", a, "fail", iteration=2, trial_change="c9", trial_arm="base")
    index = distill(traces.con, RUN, 2, tmp_path, hidden_tasks=set())
    text = index.overview.read_text()
    assert "pass@1 **50%** over 3 tasks" in text and "(6 rollouts)" in text
    assert not any("trial" in name for name in index.rollouts)


def test_links_resolve(traces, tmp_path: Path) -> None:
    build(traces)
    index = distill(traces.con, RUN, 2, tmp_path, hidden_tasks=set())
    assert len(index.tasks) == 3 and len(index.rollouts) == 6
    for path in [index.overview, *index.tasks.values(), *index.rollouts.values()]:
        links = re.findall(r"\]\(([^)]+\.md)\)", path.read_text())
        assert links or path.parent.name == "rollouts"
        for link in links:
            assert (path.parent / link).resolve().is_file(), (path, link)


def test_task_file(traces, tmp_path: Path) -> None:
    build(traces)
    index = distill(traces.con, RUN, 2, tmp_path, hidden_tasks=set())
    text = index.tasks["alpha"].read_text()
    assert "First difference at tool call 2 of 2" in text
    assert 'passing [it002-alpha-a01](../rollouts/it002-alpha-a01.md) (seq 3): `shell {"command": "python fix.py"}`' in text
    assert 'failing [it002-alpha-a02](../rollouts/it002-alpha-a02.md) (seq 3): `shell {"command": "rm -rf a.py"}`' in text
    assert "seq 4 **ToolTimeout**: took 30s" in text
    assert "E       assert 4 == 5" in text and "FAILED tests/test_outputs.py::test_add" in text
    # pytest's echo of the test source is not a failing line
    assert "assert add(2, 2) == 5" not in text and "def test_add" not in text
    assert "SELECT * FROM rollouts WHERE run_id = 'run1' AND iteration = 2 AND task_id = 'alpha'" in text


def test_identical_calls_say_so(traces, tmp_path: Path) -> None:
    traces.rollout("t", 1, "pass", events=[shell("make")])
    traces.rollout("t", 2, "fail", events=[shell("make")])
    index = distill(traces.con, RUN, 1, tmp_path, hidden_tasks=set())
    assert "made the same 1 tool calls" in index.tasks["t"].read_text()


def test_failing_rollout_shorter_diverges_at_its_end(traces, tmp_path: Path) -> None:
    traces.rollout("t", 1, "pass", events=[shell("a"), shell("b")])
    traces.rollout("t", 2, "fail", events=[shell("a")])
    text = distill(traces.con, RUN, 1, tmp_path, hidden_tasks=set()).tasks["t"].read_text()
    assert "First difference at tool call 2 of 2" in text
    assert "(seq end): `(no further tool call)`" in text


def test_rollout_file_condenses(traces, tmp_path: Path) -> None:
    long_output = "\n".join(f"line {i}" for i in range(1, 101))
    events = [shell(f"step {i}") for i in range(100)]
    events[50] = ("error", "BadArguments", "missing field command", {})
    events[60] = output(long_output)
    events[61] = ("middleware", "loop_guard", "repeated command blocked", {})
    traces.rollout("t", 1, "fail", events=events + [output(long_output)], exit_reason="max_steps")
    text = distill(traces.con, RUN, 1, tmp_path, hidden_tasks=set()).rollouts["it001-t-a01"].read_text()
    assert "101 events, 41 shown" in text
    assert "⚠ ERROR BadArguments" in text and "missing field command" in text
    assert "[... 30 events cut:" in text  # seq 20 to 49, before the error at 50
    assert "line 10\n[... 80 lines cut ...]\nline 91" in text
    assert "line 50" not in text
    assert "step 62" not in text and "middleware loop_guard" not in text  # cut as the middle
    assert "**Final exit reason:** `max_steps` → fail" in text


def test_scoreboard_rendered(traces, tmp_path: Path) -> None:
    build(traces)
    change = ChangeManifestEntry(
        id="c1", component="system_prompt", files=["system_prompt.md.j2"], commit="abcdef1",
        root_cause="no tests run", targeted_fix="ask for tests", expected_delta=10,
        predicted_fixes=[Prediction(task_id="alpha", probability=0.9),
                         Prediction(task_id="beta", probability=0.7)])
    # Its trial: alpha passes only with the change, beta never, and the stable gamma breaks.
    judgement = judge(change, "alpha=0/2 beta=0/2 gamma=2/2", base={"alpha": "0", "beta": "0"},
                      change={"alpha": "1", "beta": "0", "gamma": "0"}, iteration=1, run_id=RUN)
    board = Scoreboard.of([ChangeRecord(iteration=1, entry=change, judgement=judgement)])
    text = distill(traces.con, RUN, 2, tmp_path, hidden_tasks=set(),
                   scoreboard=board.to_markdown()).overview.read_text()
    # alpha fixed as predicted, beta not, gamma regressed unpredicted: Brier (.01 + .49) / 2
    assert "| run | 1 | 0 | 50.0% | n/a | 0.0% | 0.250 |" in text
    assert "| 1 | c1 | system_prompt | regression | revert | alpha, beta | alpha | gamma |" in text


def test_no_scoreboard_before_a_judgement(traces, tmp_path: Path) -> None:
    build(traces)
    text = distill(traces.con, RUN, 2, tmp_path, hidden_tasks=set()).overview.read_text()
    assert "No scoreboard: no change has been judged yet." in text


def test_rerun_replaces_old_files(traces, tmp_path: Path) -> None:
    build(traces)
    stale = tmp_path / "evidence" / "tasks" / "old.md"
    stale.parent.mkdir(parents=True)
    stale.write_text("old")
    distill(traces.con, RUN, 2, tmp_path, hidden_tasks=set())
    assert not stale.exists()


def test_structured_tool_errors_and_verifier_notes(traces, tmp_path: Path) -> None:
    # as agent/loop.py records a ToolError, and tasks/verifier.py a missing reward file
    tool_error = {"exit_code": None, "error": {"kind": "transient", "message": "the tool was stopped (timeout) after 30s", "suggestion": "x"}}
    traces.rollout("t", 1, "fail", verifier_tail="some output\n[no reward file written to /logs/verifier]",
                   events=[shell("sleep 99"), ("tool_result", "shell", "ERROR (transient): ...", tool_error)])
    index = distill(traces.con, RUN, 1, tmp_path, hidden_tasks=set())
    overview = index.overview.read_text()
    assert "`shell: transient`: 1 events in 1 tasks, e.g. the tool was stopped (timeout) after 30s" in overview
    assert "`[no reward file written to /logs/verifier]`" in overview and "some output" not in overview
    assert "seq 1 **shell: transient**: the tool was stopped" in index.tasks["t"].read_text()
    assert "⚠ TOOL ERROR (transient) from shell" in index.rollouts["it001-t-a01"].read_text()


def test_empty_iteration(traces, tmp_path: Path) -> None:
    index = distill(traces.con, RUN, 1, tmp_path, hidden_tasks=set())
    assert "over 0 tasks" in index.overview.read_text() and index.tasks == {}


def test_the_overview_shows_where_the_model_time_went(traces, tmp_path: Path) -> None:
    """Prefill against decode and the cache's hit rate from the servers' timings, the stalled
    calls, and the tool output whose reading cost most: the next call read 2,400 tokens."""
    first = call(tokens_read=400, tokens_cached=0, prefill_ms=30_000.0, decode_ms=8_000.0,
                 duration_ms=38_000.0)
    after_log = call(tokens_read=2_400, tokens_cached=400, prefill_ms=170_000.0,
                     decode_ms=8_000.0, duration_ms=178_000.0, stalled=True,
                     stall_ms=150_000.0)
    after_ls = call(tokens_read=60, tokens_cached=2_800, prefill_ms=4_000.0, decode_ms=8_000.0,
                    duration_ms=12_000.0)
    traces.rollout("alpha", 1, "fail", iteration=2, exit_reason="model_stalled", events=[
        first, shell("cat big.log"), output("x" * 9000), after_log, shell("ls"), output("a"),
        after_ls])
    text = distill(traces.con, RUN, 2, tmp_path, hidden_tasks=set()).overview.read_text()
    section = text[text.index("## Model time"):text.index("## Scoreboard")]
    assert "3 model calls, 228 s in all" in section
    assert "prefill (reading prompts): 204 s, 2,860 prompt tokens read at 14.0 tokens/s" in section
    assert "decode (writing replies): 24 s at 0.1 tokens/s" in section  # 3 calls of 1 token
    assert "3,200 prompt tokens taken from it, 53% of all prompt tokens" in section
    assert "stalled: 1 calls in 1 rollouts ran far slower than their server had, 150 s beyond" \
        in section
    rows = [line for line in section.splitlines() if line.startswith("| [")]
    assert rows[0].startswith("| [it002-alpha-a01](rollouts/it002-alpha-a01.md) | 2 | shell |")
    assert '`{"command":"cat big.log"}`' in rows[0] and "| 9,000 | 2,400 | 170.0 |" in rows[0]
    assert "| 1 | 60 | 4.0 |" in rows[1]
    assert "ran out of time" not in text  # a stall is the machine's, not a timeout pattern
    assert "runaways:" not in section  # none was cut


def test_the_overview_counts_the_replies_cut_as_runaways(traces, tmp_path: Path) -> None:
    cut = ("model_call", "m", "{}", {"runaway": {"unit": " | wc", "decoded": "ls" + " | wc" * 40}},
           {"duration_ms": 9_000.0})
    traces.rollout("alpha", 1, "fail", iteration=2, events=[cut, shell("ls | wc"), output("3"),
                                                             call(duration_ms=1_000.0)])
    text = distill(traces.con, RUN, 2, tmp_path, hidden_tasks=set()).overview.read_text()
    assert "runaways: 1 replies repeated one piece of text" in text


def test_a_server_without_timings_leaves_only_wall_time(traces, tmp_path: Path) -> None:
    traces.rollout("alpha", 1, "pass", iteration=2, events=[call(duration_ms=2_000.0)])
    text = distill(traces.con, RUN, 2, tmp_path, hidden_tasks=set()).overview.read_text()
    assert "1 model calls, 2 s in all" in text
    assert "the model server reported no prefill or decode times" in text
    assert "prompt cache:" not in text and "Tool outputs that cost most" not in text
