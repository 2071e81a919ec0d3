"""Failure patterns: deterministic behaviours read from the events of one iteration's non-passing
rollouts (a command repeated, the same error again and again, a write before any look, done right
after a write or without any, shell errors, deleting what it wrote, invented tools, parse
failures, step and time limits), each counted, with example rollouts and the kinds of harness
component that address it. Rendering them is overview.py's job; the improvement library cues its
entries by their names."""
from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

import duckdb
from pydantic import BaseModel, ConfigDict, Field

from evoharness.debugger import queries as q
from evoharness.debugger.render import safe_name

REPEAT_MIN = 3  # the same command (or error) this often in one rollout is a loop, not a retry
EXAMPLES = 3  # example rollouts shown per pattern
DETAIL_CHARS = 120

# A shell command that writes a file: a redirect (not into /dev/null or a descriptor), a here-doc,
# tee, in-place sed, or a copy/move.
_WRITES = re.compile(r"(?<![0-9&])>{1,2}\s*(?!&|/dev/null)\S|<<|\btee\b|\bsed\s+-i|\b(cp|mv|touch)\s")
# The target of a redirect or tee, and a command that deletes files.
_WRITE_TARGET = re.compile(r"(?:(?<![0-9&<])>{1,2}|\btee(?:\s+-a)?)\s*(?!&|/dev/null)([^\s;|&<>]+)")
_DELETES = re.compile(r"(?:^|[;&|(]\s*)(?:rm|unlink)\s")
# Shell errors a harness can explain, by what the shell prints.
_QUOTING = re.compile(r"ambiguous redirect|syntax error near unexpected token|unexpected EOF while "
                      r"looking for matching|here-document at line \d+ delimited by end-of-file")
_MISSING_FILE = "No such file or directory"
_MISSING_COMMAND = re.compile(r"([\w.+-]+): command not found")

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


def _blind_write(t: Trace) -> Found:
    """The first command writes a file: nothing was looked at before the output was written."""
    tool, args = t.calls[0] if t.calls else ("", "")
    wrote = tool == "shell" and _WRITES.search(args)
    return (1, f"first command: `{_clip(args)}`") if wrote else None


def _done_without_write(t: Trace) -> Found:
    if t.exit_reason != "done" or len(t.calls) < 2 or t.calls[-1][0] != "done":
        return None
    wrote = any(_WRITES.search(args) or tool not in ("shell", "done") for tool, args in t.calls)
    return None if wrote else (1, f"{len(t.calls) - 1} command(s), none wrote a file")


def _shell_error(marker: Callable[[str], list[str]]) -> Callable[[Trace], Found]:
    """A detector of the results whose output shows `marker` (what it returns: what it found)."""
    def detect(t: Trace) -> Found:
        found = [hit for r in t.results for hit in marker(r["content"])]
        return (len(found), ", ".join(sorted(set(found)))[:DETAIL_CHARS]) if found else None
    return detect


def _quoting(text: str) -> list[str]:
    return [_clip(line) for line in text.splitlines() if _QUOTING.search(line)][:1]


def _missing_file(text: str) -> list[str]:
    return [_clip(line) for line in text.splitlines() if _MISSING_FILE in line][:1]


def _missing_command(text: str) -> list[str]:
    return [f"{name} not installed" for name in _MISSING_COMMAND.findall(text)]


def _deleted_output(t: Trace) -> Found:
    """Files a command wrote that a later command deleted (AHE's agent removing its outputs)."""
    written: set[str] = set()
    deleted: list[str] = []
    for tool, args in t.calls:
        if _DELETES.search(args):
            named = {word.rsplit("/", 1)[-1] for word in args.split()}
            deleted += sorted(name for name in written if name in named)
        written |= {target.strip("'\"").rsplit("/", 1)[-1] for target in _WRITE_TARGET.findall(args)}
    return (len(deleted), "deleted what it wrote: " + ", ".join(deleted)) if deleted else None


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
    "blind_write": ("The agent writes its output before it has looked at any input",
                    _blind_write, [
        'rule: "Before writing anything, look at the input files (ls, head) and their format."',
        "middleware: a before_start hook that shows what /app holds before the first step"]),
    "done_without_write": ("The agent calls done without having written any file",
                           _done_without_write, [
        'rule: "Write the result to the file the task names before calling done."',
        "middleware: a before_tool hook that refuses done while a file the task names is "
        "missing"]),
    "quoting_error": ("The agent's commands fail on shell quoting (syntax error, unexpected EOF, "
                      "ambiguous redirect)", _shell_error(_quoting), [
        "tool: a write_file tool (path, content), so files are written without shell quoting",
        "middleware: an after_tool hook that explains the shell error"]),
    "missing_file": ("The agent uses paths that do not exist (No such file or directory)",
                     _shell_error(_missing_file), [
        "middleware: an after_tool hook that lists what does exist there",
        'rule: "List a directory before using paths in it; quote names with spaces."']),
    "missing_command": ("The agent runs programs that are not installed (command not found)",
                        _shell_error(_missing_command), [
        "middleware: an after_tool hook that names an installed alternative (python3)",
        'rule: "Only use standard tools; use python3 for anything else."']),
    "deleted_output": ("The agent deletes files it wrote itself", _deleted_output, [
        "middleware: a before_tool hook that refuses deleting a file the agent wrote",
        'rule: "Never delete the files you created for the task."']),
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
    found = []
    for name, hits in _hits(_traces(q.rows(con, EVENTS, scope))).items():
        title, _, remedies = DETECTORS[name]
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


def patterns_by_rollout(con: duckdb.DuckDBPyConnection, scope: q.Scope) -> dict[str, set[str]]:
    """The names of the patterns each non-passing rollout shows, by rollout id (those with none
    left out)."""
    rollouts: dict[str, set[str]] = {}
    for name, hits in _hits(_traces(q.rows(con, EVENTS, scope))).items():
        for trace, _ in hits:
            rollouts.setdefault(trace.rollout_id, set()).add(name)
    return rollouts


def _hits(traces: list[Trace]) -> dict[str, list[tuple[Trace, tuple[int, str]]]]:
    """Per pattern seen, each trace that shows it with (occurrences, detail)."""
    found = {}
    for name, (_, detect, _) in DETECTORS.items():
        hits = [(t, hit) for t in traces if (hit := detect(t)) is not None]
        if hits:
            found[name] = hits
    return found


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
