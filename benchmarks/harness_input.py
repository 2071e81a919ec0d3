"""What bounding agent-written input costs: checking a tool call's arguments in-process (RE2 and a
step budget) against doing it in a child process, rendering a prompt template in its limited child
(first and cached), refusing a YAML alias bomb, and opening the restricted SQL view.

Run as `python benchmarks/harness_input.py`; prints one `metric: value unit` line per figure."""
from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from evoharness.agent.events import Event
from evoharness.errors import EvoError
from evoharness.files import write_model
from evoharness.tasks.results import RolloutResult, rollout_id
from evoharness.traces.sql_tool import SqlTool
from evoharness.traces.store import TraceStore
from evoharness.workspace.bounded import load_yaml
from evoharness.workspace.prompt import render_template
from evoharness.workspace.repo import SEED_DIR
from evoharness.workspace.schemas import ToolSchema
from evoharness.workspace.validate import load_harness

REDOS = {"type": "object", "properties": {"a": {"type": "string", "pattern": "^(a+)+$"}}}
CHILD_CHECK = ("import json, sys; from evoharness.workspace.schemas import ToolSchema; "
               "print(ToolSchema(json.loads(sys.argv[1])).problems(json.loads(sys.argv[2])))")


def median_seconds(action: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def schema_figures() -> None:
    schema = ToolSchema(REDOS)
    evil = {"a": "a" * 40 + "!"}
    print(f"argument_check_redos_in_process: {median_seconds(lambda: schema.problems(evil), 200) * 1e6:.0f} us")
    import json
    child = [sys.executable, "-c", CHILD_CHECK, json.dumps(REDOS), json.dumps(evil)]
    seconds = median_seconds(lambda: subprocess.run(child, capture_output=True, check=True), 5)
    print(f"argument_check_in_a_child_process: {seconds * 1e3:.0f} ms")


def template_figures() -> None:
    harness = load_harness(SEED_DIR)
    variables = {"tools": harness.tools, "skills": [], "subagents": [], "memory": "",
                 "settings": harness.spec.settings}
    fresh = [harness.prompt_template + f"\n{{# {n} #}}" for n in range(5)]  # defeat the cache
    seconds = statistics.median(
        median_seconds(lambda t=text: render_template(t, variables), 1) for text in fresh)
    print(f"template_render_first: {seconds * 1e3:.0f} ms")
    cached = median_seconds(lambda: render_template(fresh[0], variables), 50)
    print(f"template_render_cached: {cached * 1e6:.0f} us")


def yaml_figures() -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{b}: &{b} [{', '.join(['*' + a] * 9)}]\n" for a, b in zip("abcdefgh", "bcdefghi"))

    def refuse() -> None:
        try:
            load_yaml(bomb, file="harness.yaml")
        except EvoError:
            return
        raise AssertionError("the alias bomb was accepted")

    print(f"yaml_alias_bomb_refused: {median_seconds(refuse, 50) * 1e3:.2f} ms")


def sql_figures() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "rollouts"
        for task in range(25):
            for attempt in range(30):
                events = [Event(seq=i, kind="tool_result", name="shell", content="output " * 60,
                                data={"exit_code": 0}) for i in range(40)]
                write_model(folder / f"{task}-{attempt}.json", RolloutResult(
                    rollout_id=rollout_id(0, f"task{task}", attempt), run_id="b", iteration=0,
                    task_id=f"task{task}", split="heldout" if task >= 20 else "train",
                    attempt=attempt, harness_commit="c", outcome="fail", events=events,
                    verifier_tail="E   assert 1 == 2\n" * 20))
        with TraceStore(Path(tmp) / "traces.duckdb") as store:
            store.ingest_dir(folder)
            forbidden = [f"assert solve_case_{i}(data) == expected_{i}" for i in range(500)]
            restricted = median_seconds(lambda: SqlTool(store, restrict_to_split="train",
                                                        forbidden=forbidden).close(), 3)
            full = median_seconds(lambda: SqlTool(store).close(), 3)
    print("sql_store_events: 30000 events")
    print(f"sql_restricted_view_open: {restricted:.2f} s")
    print(f"sql_unrestricted_snapshot_open: {full:.2f} s")


if __name__ == "__main__":
    schema_figures()
    template_figures()
    yaml_figures()
    sql_figures()
