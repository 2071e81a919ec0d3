"""Failure patterns: deterministic behaviours read from the events of one iteration's non-passing
rollouts (a command repeated, the same error again and again, done right after a write, invented
tools, parse failures, step and time limits), each counted, with example rollouts and the kinds of
harness component that address it. Rendering them is overview.py's job."""
from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

import duckdb
from pydantic import BaseModel, ConfigDict, Field

from debugger import queries as q
from debugger.render import safe_name

REPEAT_MIN = 3  # the same command (or error) this often in one rollout is a loop, not a retry
EXAMPLES = 3  # example rollouts shown per pattern
DETAIL_CHARS = 120

# A shell command that writes a file: a redirect (not into /dev/null or a descriptor), a here-doc,
# tee, in-place sed, or a copy/move.
_WRITES = re.compile(r"(?<![0-9&])>{1,2}\s*(?!&|/dev/null)\S|<<|\btee\b|\bsed\s+-i|\b(cp|mv|touch)\s")

EVENTS = r"""
SELECT v.rollout_id, v.task_id, v.outcome, v.exit_reason, e.seq, e.kind, e.name,
       left(e.content, 400) AS content, e.data::VARCHAR AS data,
       -- the seed shell tool ends its output with the command's exit code (the tool exits 0)
       regexp_extract(e.content, '\[exit code: (-?[0-9]+)\]\s*$', 1) AS command_exit
FROM v LEFT JOIN events e ON e.rollout_id = v.rollout_id
     AND e.kind IN ('tool_call', 'tool_result', 'error')
WHERE v.iteration = $it AND v.outcome <> 'pass'
ORDER BY v.rollout_id, e.seq
"""


class Example(BaseModel):
    model_config = ConfigDict(frozen=True)

    rollout_id: str
    task_id: str
    link: str  # relative to the evidence root
    detail: str


class Pattern(BaseModel):
    """One behaviour seen in `rollouts` non-passing rollouts of `tasks` tasks, `occurrences` times."""

    model_config = ConfigDict(frozen=True)

    name: str
    title: str
    rollouts: int
    tasks: int
    occurrences: int
    examples: list[Example] = Field(default_factory=list)
    remedies: list[str]  # "kind: what such a component would do"


class Trace(BaseModel):
    """The events of one non-passing rollout that the detectors read."""

    rollout_id: str
    task_id: str
    outcome: str
    exit_reason: str
    calls: list[tuple[str, str]] = Field(default_factory=list)  # (tool, normalised arguments)
    results: list[dict[str, Any]] = Field(default_factory=list)  # content, exit_code, error
    errors: list[tuple[str, str]] = Field(default_factory=list)  # (name, content)


# A detector returns (occurrences, detail) for one trace, or None when the pattern is absent.
Found = tuple[int, str] | None


def _repeated_command(t: Trace) -> Found:
    counts = Counter(t.calls)
    (tool, args), n = counts.most_common(1)[0] if counts else (("", ""), 0)
    return (n, f"`{_clip(args)}` ran {n} times") if n >= REPEAT_MIN and tool != "done" else None


def _repeated_error(t: Trace) -> Found:
    lines = Counter(_first_line(r["content"]) for r in t.results if _failed(r))
    line, n = lines.most_common(1)[0] if lines else ("", 0)
    return (n, f"{n} times: {_clip(line)}") if n >= REPEAT_MIN and line else None


def _done_after_write(t: Trace) -> Found:
    if t.exit_reason != "done" or len(t.calls) < 2 or t.calls[-1][0] != "done":
        return None
    tool, args = t.calls[-2]
    return (1, f"last command before done: `{_clip(args)}`") if _WRITES.search(args) else None


def _done_first(t: Trace) -> Found:
    return (1, "done was the first action") if t.calls and t.calls[0][0] == "done" else None


def _invented_tool(t: Trace) -> Found:
    names = [m.group(1) for r in t.results
             if (m := re.search(r"unknown tool '([^']*)'", r.get("error") or ""))]
    return (len(names), "called " + ", ".join(sorted(set(names)))) if names else None


def _invalid_arguments(t: Trace) -> Found:
    bad = [r["error"] for r in t.results if "invalid arguments" in (r.get("error") or "")]
    return (len(bad), _clip(bad[0])) if bad else None


def _parse_failure(t: Trace) -> Found:
    bad = [content for name, content in t.errors if name == "ParseError"]
    return (len(bad), _clip(bad[0])) if bad else None


def _step_limit(t: Trace) -> Found:
    return (1, f"{len(t.calls)} tool calls") if t.exit_reason == "max_steps" else None


def _timeout(t: Trace) -> Found:
    if t.exit_reason == "model_stalled":  # the machine's doing, shown under model time
        return None
    stopped = [r for r in t.results if "was stopped (timeout)" in (r.get("error") or "")]
    if t.outcome == "timeout" or t.exit_reason == "wall_time":
        return (1 + len(stopped), f"the rollout ran out of time ({t.exit_reason or t.outcome})")
    return (len(stopped), f"{len(stopped)} command(s) stopped at the tool timeout") if stopped else None


# name -> (title, detector, remedies). A title says what the agent does (a root cause as the evolve
# agent may state it); remedies name the component kind first, a rule first of all, in words a
# small model can use as they are.
DETECTORS: dict[str, tuple[str, Callable[[Trace], Found], list[str]]] = {
    "repeated_command": ("The agent runs the same command again and again", _repeated_command, [
        'rule: "If a command fails twice, change the approach instead of running it again."',
        "middleware: a before_tool hook that refuses the third identical command"]),
    "repeated_error": ("The agent gets the same error again and again without fixing its cause",
                       _repeated_error, [
        "rule: the cause the repeated error shows in the rollout (e.g. an unquoted path), as a "
        "general rule",
        "skill: a SKILL.md on what this error means and what to do instead",
        "middleware: an after_tool hook that points out a repeated error"]),
    "done_after_write": ("The agent calls done right after writing a file, without running or "
                         "showing it", _done_after_write, [
        'rule: "Compute results with commands (cmd > file), never type a value you have not '
        'seen printed; then cat the file."',
        "middleware: a before_tool hook that refuses done when nothing ran since the last write"]),
    "done_first": ("The agent calls done before running any command", _done_first, [
        'rule: "Look at the files in /app before answering."',
        "middleware: refuse done as the first action"]),
    "invented_tool": ("The agent calls tools that do not exist", _invented_tool, [
        'rule: "Use only the tools listed above; run programs through the shell tool."',
        "tool: add the tool the agent keeps asking for", "settings: constrained_decoding on"]),
    "invalid_arguments": ("The agent calls tools with invalid arguments", _invalid_arguments, [
        "tool: a clearer argument description", "settings: constrained_decoding on"]),
    "parse_failure": ("The agent's replies are not a valid action", _parse_failure, [
        "settings: constrained_decoding on", "system_prompt: a clearer reply example"]),
    "max_steps": ("The agent runs out of steps", _step_limit, [
        'rule: "Plan first, then act in few, larger steps."', "settings: max_steps",
        "middleware: warn when few steps are left"]),
    "timeouts": ("The agent runs out of time (a command or the whole task)", _timeout, [
        'rule: "Keep commands short and never start one that waits for input."',
        "settings: tool_timeout_seconds or budgets.wall_seconds", "tool: a bounded runner"]),
}


def find_patterns(con: duckdb.DuckDBPyConnection, scope: q.Scope) -> list[Pattern]:
    """Every pattern seen at least once, most widespread first."""
    traces = _traces(q.rows(con, EVENTS, scope))
    found = []
    for name, (title, detect, remedies) in DETECTORS.items():
        hits = [(t, hit) for t in traces if (hit := detect(t)) is not None]
        if not hits:
            continue
        hits.sort(key=lambda pair: (-pair[1][0], pair[0].rollout_id))
        found.append(Pattern(
            name=name, title=title, rollouts=len(hits),
            tasks=len({t.task_id for t, _ in hits}),
            occurrences=sum(hit[0] for _, hit in hits),
            examples=[Example(rollout_id=t.rollout_id, task_id=t.task_id, detail=hit[1],
                              link=f"rollouts/{safe_name(t.rollout_id)}.md")
                      for t, hit in _spread(hits)],
            remedies=remedies,
        ))
    return sorted(found, key=lambda p: (-p.rollouts, -p.occurrences, p.name))


def _spread(hits: list[tuple[Trace, tuple[int, str]]]) -> list[tuple[Trace, tuple[int, str]]]:
    """Up to EXAMPLES hits, from different tasks first (the strongest hit of each)."""
    seen: set[str] = set()
    first = [h for h in hits if h[0].task_id not in seen and not seen.add(h[0].task_id)]
    rest = [h for h in hits if h not in first]
    return (first + rest)[:EXAMPLES]


def _traces(rows: list[dict[str, Any]]) -> list[Trace]:
    traces: dict[str, Trace] = {}
    for row in rows:
        rid = row["rollout_id"]
        trace = traces.setdefault(rid, Trace(
            rollout_id=rid, task_id=row["task_id"], outcome=row["outcome"],
            exit_reason=row["exit_reason"] or ""))
        data = json.loads(row["data"]) if row["data"] else {}
        if row["kind"] == "tool_call":
            trace.calls.append((row["name"], _arguments(data.get("arguments", {}))))
        elif row["kind"] == "tool_result":
            error = (data.get("error") or {}).get("message")
            exit_code = int(row["command_exit"]) if row["command_exit"] else data.get("exit_code")
            trace.results.append({"content": row["content"] or "", "exit_code": exit_code,
                                  "error": error})
        elif row["kind"] == "error":
            trace.errors.append((row["name"], row["content"] or ""))
    return list(traces.values())


def _arguments(arguments: Any) -> str:
    """A call's arguments as compared and shown: the shell command itself when there is one."""
    if isinstance(arguments, dict) and set(arguments) == {"command"}:
        return " ".join(str(arguments["command"]).split())
    return json.dumps(arguments, sort_keys=True, ensure_ascii=False)


def _failed(result: dict[str, Any]) -> bool:
    return bool(result["error"]) or result["exit_code"] not in (None, 0)


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines()
                 if line.strip() and not line.startswith("[exit code")), "")


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= DETAIL_CHARS else text[:DETAIL_CHARS - 3] + "..."
