"""Rollouts at the model's limit: replays recorded rollouts' conversations (their own replies and
tool results, benchmarks/fixtures/rollouts.json) through the embedded 1.5B under today's settings
and the new ones, as two arms in two server processes, alternated call by call in one run, and
prints prefill and decode tokens/s, the prompt cache's hit rate and model seconds per rollout for
each, the new arm's ratio to today's, and the decode rate against the memory-bandwidth bound.

Two conversations are in flight at a time, interleaved call by call, as a run with --workers 2
sends them. An arm differs only in what it sets: the reply grammar (compact JSON or free
whitespace; the history's replies are the recorded ones, re-serialised compactly for the compact
arm), the bound on tool output the model reads, the slot a conversation is sent to, the
OpenMP wait policy of the server's threads, whether a reply that repeats itself is cut, and the
repeat budget (an arm whose agent would have ended a rollout on it makes none of its later calls:
what went before is the same under both, so the recorded conversation says where it ends).
Both arms get the same thread count and decode greedily (temperature 0), so the replies compared
are each arm's most likely ones.

Run: python benchmarks/rollouts.py [--rollouts N] [--threads T]   (the first N of the 8 recorded
         rollouts, default all; T threads for both arms, default sized from the idle cores)
     python benchmarks/rollouts.py --fixture benchmarks/fixtures/runaways.json --against uncut
                                                      (the runaway cut alone, on the rollouts
                                                      that ran away)
     python benchmarks/rollouts.py --derive           (rewrite the fixture from the recordings)
     python benchmarks/rollouts.py --derive-runaways RUN/rollouts/it000   (write runaways.json)
     python benchmarks/rollouts.py --derive-sample benchmarks/results/suite/embedded-k4-all/rollouts
                                                      (write suite-rollouts.json)"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel

from evoharness.agent.budget import Repeats, same_step
from evoharness.agent.clients.embedded import THREADS_ENV, EmbeddedModel, server_size
from evoharness.agent.clients.weights import WEIGHTS, ensure_weights
from evoharness.agent.model import Message
from evoharness.agent.parsing import action_schema
from evoharness.agent.recorder import clip
from evoharness.agent.tools import DONE
from evoharness.tasks.results import RolloutResult
from evoharness.tasks.task import load_suite
from evoharness.workspace.repo import SEED_DIR
from evoharness.workspace.spec import Budgets, Settings, ToolSpec
from evoharness.workspace.validate import load_harness, render_system_prompt

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = Path(__file__).parent / "fixtures" / "rollouts.json"
RUNAWAYS = Path(__file__).parent / "fixtures" / "runaways.json"  # rollouts up to a runaway reply
RECORDED = Path(__file__).parent / "fixtures" / "evolve-small" / "rollouts" / "it000"
SUITE_FIXTURE = Path(__file__).parent / "fixtures" / "suite-rollouts.json"  # drawn from a suite run
SUITE_SAMPLE = 8  # tasks drawn for it: about 40 minutes for both arms on 2 cores
SAMPLE_SEED = 0
WORKERS = 2  # conversations in flight at once
COPY_BYTES = 256 << 20  # per copy when measuring memory bandwidth


class Step(BaseModel):
    reply: str  # the model's recorded reply
    tool: str
    output: str  # what the tool printed, as recorded


class Conversation(BaseModel):
    rollout_id: str
    instruction: str
    steps: list[Step]  # one model call each


class Replay(BaseModel):
    system: str  # the seed harness's system prompt, rendered
    tools: list[ToolSpec]
    max_output_tokens: int
    conversations: list[Conversation]


class Arm(BaseModel):
    name: str
    compact_json: bool
    slots: bool  # each conversation keeps one slot, a new one takes its system prompt's
    tool_output_chars: int
    bounded_spin: bool  # OpenMP's threads spin briefly at a barrier, then sleep
    cut_runaways: bool  # a reply that repeats itself is stopped (agent/clients/runaway.py)
    repeated_steps: int  # the rollout ends after this many same steps in a row (0: never)


TODAY = Arm(name="today", compact_json=False, slots=False, tool_output_chars=8000,
            bounded_spin=False, cut_runaways=False, repeated_steps=0)
NEW = Arm(name="new", compact_json=True, slots=True,
          tool_output_chars=Settings().tool_output_chars, bounded_spin=True, cut_runaways=True,
          repeated_steps=Budgets().repeated_steps)
UNCUT = NEW.model_copy(update={"name": "uncut", "cut_runaways": False})  # the cut's own effect
AGAINST = {arm.name: arm for arm in (TODAY, UNCUT)}


def derive(recorded: Path = RECORDED, *, to_runaways: bool = False,
           sample: int | None = None) -> Replay:
    """A fixture from recorded rollouts of the 1.5B on the seed: each model call's reply, then its
    tool's output, up to the rollout's first compaction (after it the agent sent a shorter
    history than the events hold); the instruction from the built-in suite; the seed's system
    prompt and tools. `to_runaways`: only rollouts with a reply cut as a runaway, each up to that
    call. `sample`: the first attempts of that many of the built-in suite's tasks, drawn with a
    fixed seed from its task ids (so the draw does not depend on how far a measurement got)."""
    harness = load_harness(SEED_DIR)
    results = [RolloutResult.model_validate_json(p.read_text()) for p in recorded.glob("*.json")]
    if sample is not None:
        results = _first_attempts(results, sample)
    conversations = []
    # In the order a run starts them (tasks/runner.py plan_rollouts): every task's first attempt,
    # then every task's second, so the conversations in flight together are of different tasks.
    for result in sorted(results, key=lambda r: (r.attempt, r.task_id)):
        steps, runaway_at = _steps(result)
        if to_runaways:
            if runaway_at is None:
                continue
            steps = steps[:runaway_at + 1]
        instruction = (ROOT / "tasks" / "suite" / result.task_id / "instruction.md").read_text()
        conversations.append(Conversation(rollout_id=result.rollout_id, instruction=instruction,
                                          steps=steps))
    return Replay(system=render_system_prompt(harness), tools=[*harness.tools, DONE],
                  max_output_tokens=harness.spec.settings.max_output_tokens,
                  conversations=conversations)


def _first_attempts(results: list[RolloutResult], sample: int) -> list[RolloutResult]:
    task_ids = sorted(task.id for task, _ in load_suite(ROOT / "tasks" / "suite").items())
    drawn = random.Random(SAMPLE_SEED).sample(task_ids, min(sample, len(task_ids)))
    firsts = {r.task_id: r for r in results if r.attempt == 0 and r.task_id in drawn}
    if missing := sorted(set(drawn) - set(firsts)):
        raise SystemExit(f"no first attempt recorded for the drawn tasks {', '.join(missing)}")
    return list(firsts.values())


def _steps(result: RolloutResult) -> tuple[list[Step], int | None]:
    """A rollout's (reply, tool output) steps up to its first compaction, and the step whose
    reply was cut as a runaway first (None if none was)."""
    steps, reply, runaway_at = [], None, None
    for event in result.events:
        if event.kind == "note" and event.name == "compaction":
            break
        if event.kind == "model_call":
            reply = event.content
            if "runaway" in event.data and runaway_at is None:
                runaway_at = len(steps)
        elif event.kind == "tool_result" and reply is not None:
            steps.append(Step(reply=reply, tool=event.name, output=event.content))
            reply = None
    return steps, runaway_at


def messages(replay: Replay, conversation: Conversation, call: int, arm: Arm) -> list[dict]:
    """What call number `call` of the conversation sends under `arm`: the recorded exchanges
    before it, each reply as the arm's grammar writes it, each output bounded as the arm reads."""
    sent = [Message(role="system", content=replay.system),
            Message(role="user", content=conversation.instruction)]
    for step in conversation.steps[:call]:
        reply = _as_written(step.reply, compact=arm.compact_json)
        sent += [Message(role="assistant", content=reply),
                 Message(role="user", content=_answer(step, arm))]
    return [m.model_dump() for m in sent]


def _answer(step: Step, arm: Arm) -> str:
    return f"Result of {step.tool}:\n{clip(step.output, arm.tool_output_chars)}"


def calls_made(conversation: Conversation, arm: Arm) -> int:
    """How many of the recorded calls an agent under `arm` makes: its repeat budget ends the
    rollout after the step that makes `arm.repeated_steps` same steps in a row (agent/budget.py)."""
    repeats = Repeats()
    for made, step in enumerate(conversation.steps, start=1):
        try:
            action = json.loads(step.reply)
            call = (action["tool"], action["arguments"])
        except (json.JSONDecodeError, KeyError, TypeError):
            call = (step.reply, {})
        if 0 < arm.repeated_steps <= repeats.add(same_step(*call, _answer(step, arm))):
            return made
    return len(conversation.steps)


def _as_written(reply: str, *, compact: bool) -> str:
    """A recorded reply as the arm's grammar writes it: with no whitespace, or pretty-printed as
    the 1.5B wrote 20 of its 21 replies in evolve-small under today's grammar (a recording made
    under either grammar is shown to both arms as each would have written it)."""
    try:
        action = json.loads(reply)
    except json.JSONDecodeError:
        return reply
    if compact:
        return json.dumps(action, separators=(",", ":"), ensure_ascii=False)
    return json.dumps(action, indent=2, ensure_ascii=False)


def serve(arm: Arm) -> None:
    """An arm's server: one JSON request a line on stdin, one answer a line on stdout."""
    model = EmbeddedModel(WEIGHTS["qwen2.5-coder-1.5b"], workers=WORKERS,
                          compact_json=arm.compact_json, cut_runaways=arm.cut_runaways)
    model.chat([Message(role="user", content="hi")], max_tokens=1)  # loads the server, untimed
    bound: dict[str, Any] = {}
    for line in sys.stdin:
        request = json.loads(line)
        if request["op"] == "end":
            bound.pop(request["conversation"], None)  # its slot goes back to the book
            continue
        client = model
        if arm.slots:
            client = bound.setdefault(request["conversation"],
                                      model.for_rollout(request["conversation"]))
        started = time.perf_counter()
        reply = client.chat([Message(**m) for m in request["messages"]], json_mode=True,
                            schema=request["schema"], max_tokens=request["max_tokens"],
                            temperature=0.0)
        wall_s = time.perf_counter() - started
        timings = reply.timings.model_dump() if reply.timings else {}
        print(json.dumps({"wall_s": wall_s, "tokens_out": reply.tokens_out,
                          "runaway": reply.runaway is not None, **timings}), flush=True)


class Server:
    """An arm's server process."""

    def __init__(self, arm: Arm, threads: int) -> None:
        env = dict(os.environ, **{THREADS_ENV: str(threads)})
        # The new arm's spin count is the one embedded.py sets; today's threads spin as long as
        # libgomp does unless told (an empty wait policy is ignored by libgomp, with a warning,
        # and keeps embedded.py from setting a spin count).
        env.pop("GOMP_SPINCOUNT", None)
        if arm.bounded_spin:
            env.pop("OMP_WAIT_POLICY", None)
        else:
            env["OMP_WAIT_POLICY"] = ""
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--serve", arm.model_dump_json()], env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

    def ask(self, request: dict[str, Any]) -> dict[str, Any] | None:
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        if request["op"] == "end":
            return None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("an arm's server process ended")
        return json.loads(line)

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()


def schedule(conversations: list[Conversation]) -> list[tuple[int, int | None]]:
    """(conversation, call) in the order a run with WORKERS workers sends them: the conversations
    in flight take turns; call None ends one, and the next conversation starts."""
    order, waiting = [], list(range(len(conversations)))
    active = [[waiting.pop(0), 0] for _ in range(min(WORKERS, len(waiting)))]
    while active:
        item = active.pop(0)
        order.append((item[0], item[1]))
        item[1] += 1
        if item[1] < len(conversations[item[0]].steps):
            active.append(item)
        else:
            order.append((item[0], None))
            if waiting:
                active.append([waiting.pop(0), 0])
    return order


def replay(data: Replay, arms: list[Arm], threads: int) -> dict[str, list[dict[str, Any]]]:
    """Every call under every arm, the arms alternated call by call (which goes first, too)."""
    servers = {arm.name: Server(arm, threads) for arm in arms}
    schema = action_schema(data.tools, data.max_output_tokens)
    calls: dict[str, list[dict[str, Any]]] = {arm.name: [] for arm in arms}
    made = {arm.name: [calls_made(c, arm) for c in data.conversations] for arm in arms}
    try:
        for n, (index, call) in enumerate(schedule(data.conversations)):
            conversation = data.conversations[index]
            for arm in arms if n % 2 == 0 else arms[::-1]:
                if call is None:
                    servers[arm.name].ask({"op": "end", "conversation": conversation.rollout_id})
                    continue
                if call >= made[arm.name][index]:
                    continue  # the arm's agent ended this rollout on its repeat budget
                answer = servers[arm.name].ask({
                    "op": "call", "conversation": conversation.rollout_id,
                    "messages": messages(data, conversation, call, arm), "schema": schema,
                    "max_tokens": data.max_output_tokens})
                calls[arm.name].append(answer)
                print(f"  {arm.name:<5} {conversation.rollout_id} call {call + 1}: "
                      f"{answer['wall_s']:.1f} s, read {answer.get('tokens_read')}, cached "
                      f"{answer.get('tokens_cached')}, wrote {answer['tokens_out']}", flush=True)
    finally:
        for server in servers.values():
            server.close()
    return calls


def figures(calls: list[dict[str, Any]], rollouts: int) -> dict[str, float]:
    def total(key: str) -> float:
        return sum(c.get(key) or 0 for c in calls)

    read, cached = total("tokens_read"), total("tokens_cached")
    return {
        "prefill_tokens_per_s": read / (total("prefill_ms") / 1000),
        "decode_tokens_per_s": total("tokens_out") / (total("decode_ms") / 1000),
        "cache_hit_rate": cached / (read + cached),
        "seconds_per_rollout": total("wall_s") / rollouts,
        "prompt_tokens_read_per_rollout": read / rollouts,
        "tokens_written_per_rollout": total("tokens_out") / rollouts,
    }


UNITS = {"prefill_tokens_per_s": "tokens/s", "decode_tokens_per_s": "tokens/s",
         "cache_hit_rate": "share", "seconds_per_rollout": "s",
         "prompt_tokens_read_per_rollout": "tokens", "tokens_written_per_rollout": "tokens"}


def copy_bandwidth() -> float:
    """Bytes per second numpy copies between two large buffers (the best of a few)."""
    source, target = np.ones(COPY_BYTES, np.uint8), np.empty(COPY_BYTES, np.uint8)
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        np.copyto(target, source)
        best = min(best, time.perf_counter() - started)
    return COPY_BYTES / best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rollouts", type=int, default=None, help="replay the first N only")
    parser.add_argument("--threads", type=int, default=None, help="both arms' decode threads "
                        "(default: the embedded model's sizing, from the cores idle now)")
    parser.add_argument("--against", choices=sorted(AGAINST), default=TODAY.name,
                        help="the arm the new settings are compared with (default today; uncut: "
                        "the new settings without the runaway cut)")
    parser.add_argument("--fixture", type=Path, default=FIXTURE,
                        help=f"the recorded conversations (default {FIXTURE.name}; "
                        f"{RUNAWAYS.name}: rollouts up to a reply cut as a runaway)")
    parser.add_argument("--derive", action="store_true", help="rewrite the fixture")
    parser.add_argument("--derive-runaways", type=Path, metavar="ROLLOUTS_DIR",
                        help=f"write {RUNAWAYS.name} from a run's or evaluation's rollout files")
    parser.add_argument("--derive-sample", type=Path, metavar="ROLLOUTS_DIR",
                        help=f"write {SUITE_FIXTURE.name}: the first attempts of {SUITE_SAMPLE} "
                        "tasks drawn from a suite measurement's rollout files")
    parser.add_argument("--serve", help=argparse.SUPPRESS)  # an arm's server process
    args = parser.parse_args()
    if args.serve:
        serve(Arm.model_validate_json(args.serve))
        return
    if args.derive or args.derive_runaways or args.derive_sample:
        target, replay_data = (
            (RUNAWAYS, derive(args.derive_runaways, to_runaways=True)) if args.derive_runaways
            else (SUITE_FIXTURE, derive(args.derive_sample, sample=SUITE_SAMPLE))
            if args.derive_sample else (FIXTURE, derive()))
        target.write_text(replay_data.model_dump_json(indent=1) + "\n")
        print(f"wrote {target}: {len(replay_data.conversations)} conversations")
        return
    data = Replay.model_validate_json(args.fixture.read_text())
    data.conversations = data.conversations[:args.rollouts]
    against = AGAINST[args.against]
    threads = args.threads or server_size(WORKERS).threads
    print(f"threads: {threads} threads")
    print(f"load_average_before: {os.getloadavg()[0]:.1f} runnable processes")
    started = time.perf_counter()
    calls = replay(data, [against, NEW], threads)
    print(f"load_average_after: {os.getloadavg()[0]:.1f} runnable processes")
    print(f"replay_s: {time.perf_counter() - started:.0f} s")
    rollouts = len(data.conversations)
    print(f"rollouts: {rollouts} rollouts")
    for arm in (NEW, against):
        print(f"{arm.name}_model_calls: {len(calls[arm.name])} calls")
    for arm in (NEW, against):
        print(f"{arm.name}_runaways_cut: {sum(c['runaway'] for c in calls[arm.name])} replies")
    old, new = figures(calls[against.name], rollouts), figures(calls[NEW.name], rollouts)
    for name, value in new.items():
        print(f"{name}: {value:.3g} {UNITS[name]}")
    for name, value in old.items():
        print(f"{against.name}_{name}: {value:.3g} {UNITS[name]}")
    for name in new:
        if old[name]:  # a cache hit rate of 0 has no ratio
            print(f"{name}_ratio: {new[name] / old[name]:.3g} x (new / {against.name})")
    model_bytes = ensure_weights(WEIGHTS["qwen2.5-coder-1.5b"]).stat().st_size
    bandwidth = copy_bandwidth()
    bound = bandwidth / model_bytes
    print(f"model_bytes_per_token: {model_bytes / 1e9:.2f} GB")
    print(f"copy_bandwidth: {bandwidth / 2**30:.1f} GiB/s")
    print(f"decode_bound_tokens_per_s: {bound:.1f} tokens/s")
    print(f"decode_share_of_bound: {new['decode_tokens_per_s'] / bound:.2f} share")
    print(f"{against.name}_decode_share_of_bound: "
          f"{old['decode_tokens_per_s'] / bound:.2f} share")


if __name__ == "__main__":
    main()
