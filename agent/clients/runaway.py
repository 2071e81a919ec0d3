"""A runaway reply: one that has started repeating itself and would run on to the reply cap. How
a streaming client sees it (a tail that repeats one unit), and what of the reply it keeps. How a
client streams and stops its server, and what the loop does with a cut reply, are theirs."""
from __future__ import annotations

import json
import shlex
from dataclasses import dataclass

from agent.model import Runaway

# A reply whose last RUNAWAY_SPAN characters repeat one unit at least MIN_COPIES times is stuck:
# the 1.5B wrote `| sed 's/"//g'` until its reply cap (~470 tokens, ~40 s) in 9 of the main job's
# 104 exam calls, 30% of the exam's model time. 160 characters is 40-80 tokens; no command a task
# needs repeats one unit that long.
RUNAWAY_SPAN = 160
MIN_COPIES = 3


class StreamedText:
    """A reply's text as it streams in, piece by piece: `add` says when it has run away, `kept`
    what of it to keep (a JSON reply closed) and why."""

    def __init__(self, json_reply: bool) -> None:
        self.json_reply = json_reply
        self.text = ""
        self.period: int | None = None

    def add(self, piece: str) -> bool:
        self.text += piece
        self.period = runaway_unit(self.text)
        return self.period is not None

    def kept(self) -> tuple[str, Runaway | None]:
        if self.period is None:
            return self.text, None
        content, runaway = cut_runaway(self.text, self.period, self.json_reply)
        return (close_json(content) if self.json_reply else content), runaway


def runaway_unit(text: str) -> int | None:
    """The length of the unit that the text's last RUNAWAY_SPAN characters repeat, at least
    MIN_COPIES times (the shortest such unit); None when the tail does not repeat."""
    if len(text) < RUNAWAY_SPAN:
        return None
    tail = text[-RUNAWAY_SPAN:]
    for period in range(1, RUNAWAY_SPAN // MIN_COPIES + 1):
        if tail[period:] == tail[:-period]:
            return period
    return None


def cut_runaway(text: str, period: int, json_reply: bool = False) -> tuple[str, Runaway]:
    """The reply up to the end of one copy of its repeated unit, and why it was cut. Where the
    text before the repeats ends as the unit does, the repeats seem to start earlier than they
    did (`| sed 's/,//g'` then ` | sed 's/ //g'` again and again, as the 1.5B wrote it, shares
    `//g'`); of the cuts within one unit after the first copy, a JSON reply keeps the first whose
    open string closes its quotes as a shell reads them, so the command kept is
    `... | sed 's/ //g'`, not `... | sed 's/ `."""
    start = len(text) - RUNAWAY_SPAN
    while start > 0 and text[start - 1] == text[start - 1 + period]:
        start -= 1
    ends = range(start + period, min(len(text), start + 2 * period) + 1)
    end = next((e for e in ends if json_reply and _quotes_paired(text[:e])), start + period)
    return text[:end], Runaway(unit=text[start:start + period], decoded=text)


def _quotes_paired(cut: str) -> bool:
    """Whether the JSON string that `cut` leaves open closes every quote it opens, as a shell
    reads it (most strings an agent writes are commands)."""
    scan = _scan(cut)
    if scan.string_at < 0:
        return False
    try:
        shlex.split(json.loads(_without_partial_escape(cut, scan)[scan.string_at:] + '"',
                               strict=False))
    except ValueError:  # JSONDecodeError too
        return False
    return True


def close_json(text: str) -> str:
    """`text` with the strings, objects and arrays it leaves open closed, a half-written escape
    dropped, so an action cut inside its command can still run. Text that was not a JSON value
    cut short stays unparsable, as it was."""
    scan = _scan(text)
    if scan.string_at >= 0:
        text = _without_partial_escape(text, scan) + '"'
    return text + "".join(reversed(scan.closers))


@dataclass
class _Scan:
    closers: list[str]  # what closes each object and array left open, innermost last
    string_at: int  # where the string left open began (its quote), -1 when none is open
    escaped: bool  # the text ends inside a backslash escape
    escape_at: int  # where the open string's last escape began, -1 when none


def _scan(text: str) -> _Scan:
    scan = _Scan(closers=[], string_at=-1, escaped=False, escape_at=-1)
    for at, char in enumerate(text):
        if scan.string_at >= 0:
            if scan.escaped:
                scan.escaped = False
            elif char == "\\":
                scan.escaped, scan.escape_at = True, at
            elif char == '"':
                scan.string_at = -1
        elif char == '"':
            scan.string_at, scan.escape_at = at, -1
        elif char in "{[":
            scan.closers.append("}" if char == "{" else "]")
        elif char in "}]" and scan.closers:
            scan.closers.pop()
    return scan


def _without_partial_escape(text: str, scan: _Scan) -> str:
    """The open string's text less an escape cut short (a lone backslash, a \\u with under four
    hex digits)."""
    at = scan.escape_at
    unicode_open = at >= 0 and text[at + 1:at + 2] == "u" and len(text) - at < 6
    return text[:at] if scan.escaped or unicode_open else text
