"""Where a passing and a failing rollout of one task part ways: the first differing tool call.

Tool calls are compared normalised (tool name plus arguments with sorted keys); fetching them is
left to debugger/queries.py.
"""
from __future__ import annotations

import json
from itertools import zip_longest
from typing import Any

from pydantic import BaseModel, ConfigDict

MAX_CALL_CHARS = 300


class Call(BaseModel):
    model_config = ConfigDict(frozen=True)

    seq: int
    key: str  # the normalised form the comparison uses
    label: str  # what the evidence shows


class Divergence(BaseModel):
    """step is the 1-based index of the first differing tool call; None when all calls agree."""

    model_config = ConfigDict(frozen=True)

    passing: str  # rollout ids
    failing: str
    step: int | None
    pass_seq: int | None = None
    fail_seq: int | None = None
    pass_call: str = ""
    fail_call: str = ""
    calls: int = 0  # tool calls compared


def to_call(seq: int, name: str, data: str) -> Call:
    """Normalise one tool_call event; arguments live under data["arguments"] or are data itself."""
    parsed: Any = json.loads(data) if data else {}
    args = parsed.get("arguments", parsed) if isinstance(parsed, dict) else parsed
    shown = json.dumps(args, sort_keys=True, ensure_ascii=False)
    label = f"{name} {shown}"
    if len(label) > MAX_CALL_CHARS:
        label = label[:MAX_CALL_CHARS] + " ..."
    return Call(seq=seq, key=f"{name}\0{shown}", label=label)


def first_divergence(
    passing_id: str, passing: list[Call], failing_id: str, failing: list[Call]
) -> Divergence:
    """Compare two tool-call sequences step by step; a missing call counts as a difference."""
    for step, (a, b) in enumerate(zip_longest(passing, failing), start=1):
        if a is None or b is None or a.key != b.key:
            return Divergence(
                passing=passing_id, failing=failing_id, step=step,
                pass_seq=a.seq if a else None, fail_seq=b.seq if b else None,
                pass_call=a.label if a else "(no further tool call)",
                fail_call=b.label if b else "(no further tool call)",
                calls=max(len(passing), len(failing)),
            )
    return Divergence(passing=passing_id, failing=failing_id, step=None, calls=len(passing))
