"""The rollout runner with the scripted model on the fixture tasks: every outcome kind, written
atomically, k attempts over N workers, skipping stored rollouts."""
from __future__ import annotations

import json
import threading

import pytest

from evoharness.agent.model import ModelError
from evoharness.tasks.results import Outcome, RolloutResult
from evoharness.agent.events import ModelTotals
from evoharness.agent.exits import ExitReason
from evoharness.agent.loop import AgentResult
from evoharness.tasks.runner import (
    INFRA_RERUNS, _Guarded, _outcome, in_pool, plan_rollouts, require_sandbox, result_base,
    rollout, run_rollouts,
)
from evoharness.tasks.verifier import VerifierResult
from evoharness.agent.clients.scripted import ScriptedModel, json_action

from .conftest import needs_bwrap

pytestmark = needs_bwrap

SOLVE = [json_action("shell", command='echo "Hello, world!" > hello.txt'),
         json_action("done", summary="wrote hello.txt")]


def _run(harness, task, model, tmp_path, **kwargs):
    defaults = dict(run_id="r1", iteration=0, out_dir=tmp_path / "out")
    paths = run_rollouts(harness, "abc123", [(task, "train")], model, **{**defaults, **kwargs})
    return [RolloutResult.model_validate_json(p.read_text()) for p in paths]


def test_pass_writes_a_complete_result(seed_harness, hello_task, tmp_path):
    [result] = _run(seed_harness, hello_task, ScriptedModel(SOLVE), tmp_path)
    assert result.outcome == Outcome.PASS and result.reward == 1.0
    assert (result.rollout_id, result.harness_commit, result.exit_reason) == (
        "it000-hello-world-a00", "abc123", "done")
    assert result.steps >= 2 and result.tokens_in > 0 and result.duration_s > 0
    assert any(e.kind == "tool_result" for e in result.events)
    assert result.model_time.model_calls == 2  # its model calls summed from its events
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["it000-hello-world-a00.json"]


def test_doing_nothing_fails_with_verifier_tail(seed_harness, hello_task, tmp_path):
    [result] = _run(seed_harness, hello_task,
                    ScriptedModel([json_action("done", summary="nothing")]), tmp_path)
    assert result.outcome == Outcome.FAIL and "does not exist" in result.verifier_tail


def test_model_unavailable_is_infra_error(seed_harness, hello_task, tmp_path):
    down = ModelError("connection refused", kind="unavailable")
    [result] = _run(seed_harness, hello_task, ScriptedModel([down] * 10), tmp_path)
    assert (result.outcome, result.exit_reason) == (Outcome.INFRA_ERROR, "model_unavailable")


def test_exception_in_a_rollout_becomes_infra_error_after_two_reruns(seed_harness, hello_task,
                                                                     tmp_path):
    tries = []

    def broken(messages):
        tries.append(1)
        raise RuntimeError("boom")

    [result] = _run(seed_harness, hello_task, ScriptedModel([broken] * 5), tmp_path)
    assert result.outcome == Outcome.INFRA_ERROR
    assert result.exit_reason == "exception: RuntimeError: boom"
    assert len(tries) == 1 + INFRA_RERUNS == 3
    notes = [e for e in result.events if e.name == "infra_rerun"]
    assert [n.data["try"] for n in notes] == [1, 2]
    assert "RuntimeError: boom" in notes[0].content


def test_an_infra_error_that_goes_away_on_a_rerun_is_scored(seed_harness, hello_task, tmp_path):
    """The first try dies outside the agent (an exception), the rerun passes: the result kept is
    the pass, with a note of the first try."""
    def broken(messages):
        raise RuntimeError("a passing fault")

    [result] = _run(seed_harness, hello_task, ScriptedModel([broken, *SOLVE]), tmp_path)
    assert (result.outcome, result.reward) == (Outcome.PASS, 1.0)
    [note] = [e for e in result.events if e.name == "infra_rerun"]
    assert "a passing fault" in note.content


def test_hung_model_is_a_timeout_and_the_abandoned_agent_asks_no_more(seed_harness, hello_task,
                                                                      tmp_path):
    released = threading.Event()

    def hang(messages):
        released.wait()  # answers only once the rollout is over: it misses any deadline
        return json_action("shell", command="true")  # an agent left alone would take a step

    model = ScriptedModel([hang, *SOLVE])
    try:
        [result] = _run(seed_harness, hello_task, model, tmp_path, rollout_timeout=0.5)
    finally:
        released.set()
    assert (result.outcome, result.exit_reason) == (Outcome.TIMEOUT, "rollout_timeout")
    for thread in threading.enumerate():  # the abandoned agent ends at its next model call
        if thread.name == f"agent-{hello_task.id}":
            thread.join(timeout=60)  # a safety net
    assert len(model.calls) == 1


def test_a_rollout_out_of_time_after_stalled_calls_says_the_model_stalled():
    """The watchdog (at 300 s) or the wall budget ended it, after model calls its server ran far
    slower than it had. When they lost half its time or more, the machine spent it and the exit
    reason says so; two stalls that lost 43 s (a neighbour's prefill, measured) do not hide the
    timeout of a harness stuck in a loop."""
    check = VerifierResult(reward=0.0, passed=False, output_tail="")
    guard = _Guarded(sandbox=None)
    stalled = ModelTotals(model_calls=14, stalled_calls=9, stall_s=150.0)
    brief = ModelTotals(model_calls=14, stalled_calls=2, stall_s=43.0)
    assert _outcome(None, guard, check, stalled, 300.0) == (Outcome.TIMEOUT, "model_stalled")
    assert _outcome(None, guard, check, brief, 300.0) == (Outcome.TIMEOUT, "rollout_timeout")
    assert _outcome(None, guard, check, ModelTotals(), 300.0) == (Outcome.TIMEOUT,
                                                                  "rollout_timeout")
    agent = AgentResult(exit_reason=ExitReason.MODEL_STALLED, steps=3, tokens_in=0, tokens_out=0)
    assert _outcome(agent, guard, check, stalled, 300.0) == (Outcome.TIMEOUT, "model_stalled")


def test_a_timed_out_rollout_counts_its_steps_and_tokens_from_its_events(seed_harness,
                                                                         hello_task, tmp_path):
    """The agent takes steps, then its model hangs past the deadline: the runner never gets the
    agent's own counts, so the rollout's are its events' (they were 0 steps, issue 21)."""
    released = threading.Event()

    def hang(messages):
        released.wait()
        return json_action("done", summary="too late")

    steps = [json_action("shell", command="true"), json_action("shell", command="echo hi")]
    try:
        [result] = _run(seed_harness, hello_task, ScriptedModel([*steps, hang]), tmp_path,
                        rollout_timeout=8)
    finally:
        released.set()
    calls = [e for e in result.events if e.kind == "tool_call"]
    assert (result.outcome, result.exit_reason) == (Outcome.TIMEOUT, "rollout_timeout")
    assert result.steps == len(calls) > 0  # both steps, unless a crawling machine missed one
    assert result.tokens_in == sum(e.tokens_in for e in result.events) > 0
    assert result.tokens_out == sum(e.tokens_out for e in result.events) > 0


def test_k_attempts_over_workers_and_skip_existing(seed_harness, hello_task, sum_task, tmp_path):
    tasks = [(hello_task, "train"), (sum_task, "heldout")]
    seen = []
    paths = run_rollouts(seed_harness, "c1", tasks, lambda: ScriptedModel(SOLVE), run_id="r",
                         iteration=2, out_dir=tmp_path, attempts=2, workers=2,
                         progress=seen.append)
    results = {p.stem: json.loads(p.read_text()) for p in paths}
    assert sorted(results) == ["it002-hello-world-a00", "it002-hello-world-a01",
                               "it002-sum-numbers-a00", "it002-sum-numbers-a01"]
    assert {r["task_id"]: r["outcome"] for r in results.values()} == {
        "hello-world": "pass", "sum-numbers": "fail"}
    assert {r["split"] for r in results.values() if r["task_id"] == "sum-numbers"} == {"heldout"}
    assert len(seen) == 4
    again = run_rollouts(seed_harness, "c1", tasks, lambda: ScriptedModel(SOLVE), run_id="r",
                         iteration=2, out_dir=tmp_path, attempts=3, workers=2,
                         skip=set(results))
    assert sorted(p.stem for p in again) == ["it002-hello-world-a02", "it002-sum-numbers-a02"]
    assert not list(tmp_path.glob(".*.tmp"))


class _SeedLog(ScriptedModel):
    """SOLVE, noting the sampling seed each call carries."""

    def __init__(self) -> None:
        super().__init__(SOLVE)
        self.seeds: list[int | None] = []

    def chat(self, messages, **options):
        self.seeds.append(options.get("seed"))
        return super().chat(messages, **options)


def test_both_arms_of_a_trial_pair_sample_alike_and_no_other_rollouts_do(seed_harness,
                                                                         hello_task):
    def seeds(run="r1", attempt=0, change="", arm="") -> list[int | None]:
        model = _SeedLog()
        base = result_base(run, 0, hello_task, "train", attempt, "c0", change, arm)
        result = rollout(seed_harness, model, hello_task, base,
                         sandbox_factory=require_sandbox(), rollout_timeout=None)
        assert result.outcome == Outcome.PASS
        return model.seeds

    base, change = seeds(change="c1", arm="base"), seeds(change="c1", arm="change")
    assert base == change and len(base) == 2 and len(set(base)) == 2  # a seed per call
    assert all(isinstance(seed, int) and 0 <= seed < 2**31 for seed in base)
    others = [seeds(change="c1", arm="base", attempt=1), seeds(change="c2", arm="base"),
              seeds(), seeds(run="r2", change="c1", arm="base")]
    assert all(set(other).isdisjoint(base) for other in others)
    assert seeds() == others[2]  # the same rollout again draws the same


def test_plan_interleaves_attempts(hello_task, sum_task):
    plan = plan_rollouts([(hello_task, "train"), (sum_task, "heldout")], 2)
    assert [(t.id, a) for t, _, a in plan] == [("hello-world", 0), ("sum-numbers", 0),
                                                ("hello-world", 1), ("sum-numbers", 1)]


def test_sandbox_failure_is_infra_error_after_two_reruns(seed_harness, hello_task, tmp_path):
    """bwrap cannot mount the harness: it reports no command started, which the host alone
    reads. Each try gets a fresh sandbox (and a fresh client from the factory)."""
    from evoharness.tasks.sandbox.bwrap import BwrapSandbox

    made = []

    def broken_sandbox(task, *, harness_dir):
        made.append(1)
        return BwrapSandbox.for_task(task, harness_dir=harness_dir / "missing")

    [result] = _run(seed_harness, hello_task, lambda: ScriptedModel(SOLVE), tmp_path,
                    sandbox_factory=broken_sandbox)
    assert result.outcome == Outcome.INFRA_ERROR
    assert result.exit_reason.startswith("sandbox_error: bwrap:")
    assert len(made) == 3


@pytest.mark.slow
def test_embedded_model_rollouts_record_an_outcome(seed_harness, hello_task, sum_task, tmp_path):
    from evoharness.agent.clients import make_model

    # The 0.5B: what is tested is the runner with a real model (the 1.5B runs in
    # test_loop_embedded.py); the 1.5B took 4 minutes here at a load average of 8 on 2 cores.
    model = make_model("embedded-small")
    # Two steps of at most 128 tokens end each rollout by its budget, not by a clock: with a free
    # retry after each unusable reply (agent/loop.py), two rollouts generate at most 1,024 tokens,
    # far inside pytest's timeout on a loaded 2-core machine; the watchdog stays a safety net.
    settings = seed_harness.spec.settings.model_copy(update={"max_steps": 2,
                                                             "max_output_tokens": 128})
    harness = seed_harness.model_copy(
        update={"spec": seed_harness.spec.model_copy(update={"settings": settings})})
    paths = run_rollouts(harness, "c1", [(hello_task, "train"), (sum_task, "heldout")],
                         model, run_id="r", iteration=0, out_dir=tmp_path, rollout_timeout=300)
    results = [RolloutResult.model_validate_json(p.read_text()) for p in paths]
    assert [r.task_id for r in results] == ["hello-world", "sum-numbers"]
    # Pass or fail is the model's business; a recorded, non-infra outcome is what is asserted.
    assert all(r.outcome in (Outcome.PASS, Outcome.FAIL, Outcome.TIMEOUT) for r in results), [
        (r.outcome, r.exit_reason) for r in results]
    assert all(r.model for r in results)
    assert all(r.steps <= 2 for r in results)


# What a harness script reports about where it runs: each item differs between the host and the
# sandbox (README "Sandbox": its own UTS namespace named `sandbox`, cwd /app, a fresh /tmp as HOME,
# no variable of the host's, none of the host's files but /app and the system).
PROBE = '''
import json, os, socket, sys
def where():
    return {"host": socket.gethostname(), "cwd": os.getcwd(), "home": os.environ.get("HOME"),
            "script": os.path.abspath(sys.argv[0]), "secret": "EVO_HOST_SECRET" in os.environ,
            "sees_host_file": os.path.exists(HOST_FILE)}
'''
TOOL = PROBE + '''
json.load(sys.stdin)
print(json.dumps(where()))
'''
MIDDLEWARE = PROBE + '''
def after_tool(payload):
    payload["output"] += "\\nmiddleware " + json.dumps(where())
    return payload

if __name__ == "__main__":
    request = json.load(sys.stdin)
    print(json.dumps(globals()[request["hook"]](request["payload"])))
'''


def _probing_harness(root, host_file):
    """The seed harness plus a `where` tool and a `where` middleware, both running PROBE."""
    import shutil

    import yaml

    from evoharness.workspace.repo import SEED_DIR
    from evoharness.workspace.validate import load_harness

    shutil.copytree(SEED_DIR, root)
    constant = f"HOST_FILE = {str(host_file)!r}\n"
    (root / "tools" / "where.py").write_text(constant + TOOL)
    (root / "tools" / "where.yaml").write_text(yaml.safe_dump({
        "name": "where", "description": "Where does this run?",
        "parameters": {"type": "object", "properties": {}, "additionalProperties": False}}))
    (root / "middleware").mkdir()
    (root / "middleware" / "where.py").write_text(constant + MIDDLEWARE)
    spec = yaml.safe_load((root / "harness.yaml").read_text())
    spec["tools"].append("where")
    spec["middleware"] = ["where"]
    (root / "harness.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    return load_harness(root)


def test_harness_tools_and_middleware_run_inside_the_sandbox(hello_task, tmp_path, monkeypatch):
    """A harness tool and a middleware hook, run by a real rollout, report the sandbox's view: on
    the host (or through the HostEnvironment test double) every item below would differ."""
    monkeypatch.setenv("EVO_HOST_SECRET", "must not reach harness code")
    host_file = tmp_path / "host-only.txt"
    host_file.write_text("the host's\n")
    harness = _probing_harness(tmp_path / "harness", host_file)
    [result] = _run(harness, hello_task, ScriptedModel([json_action("where"), *SOLVE]), tmp_path)
    assert result.outcome == Outcome.PASS, (result.exit_reason, result.verifier_tail)
    assert not [e for e in result.events if e.kind == "error"]
    output = next(e.content for e in result.events if e.kind == "tool_result")
    tool_line, middleware_line = [line for line in output.splitlines() if line.strip()]
    inside = {"host": "sandbox", "cwd": "/app", "home": "/tmp", "secret": False,
              "sees_host_file": False}
    assert json.loads(tool_line) == {**inside, "script": "/harness/tools/where.py"}
    assert middleware_line.startswith("middleware ")
    assert json.loads(middleware_line.removeprefix("middleware ")) == {
        **inside, "script": "/harness/middleware/where.py"}


@pytest.mark.parametrize("stop", ["error", "close"])
def test_a_stopped_pool_starts_no_more_rollouts(stop):
    """Ctrl-C or an error in the consumer, or a consumer that stops reading: the rollouts still
    queued never start (the one in flight ends on its own), where leaving the pool used to run
    every queued one first. One worker: the second item, if it started before the consumer
    stopped, is held until then, so the queue cannot move past it."""
    before = set(threading.enumerate())
    started: list[int] = []
    release = threading.Event()

    def work(item: int):
        started.append(item)
        if item == 0 and stop == "error":
            raise KeyboardInterrupt
        if item == 1:
            assert release.wait(60)  # a safety net only: released below
        return item

    results = in_pool(list(range(10)), work, workers=1)
    if stop == "error":
        with pytest.raises(KeyboardInterrupt):
            next(results)
    else:
        assert next(results) == 0
        results.close()
    release.set()
    for thread in set(threading.enumerate()) - before:
        thread.join(timeout=60)
    assert started in ([0], [0, 1])  # leaving the pool's `with` ran all ten
