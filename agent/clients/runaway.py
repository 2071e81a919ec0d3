"""A runaway reply: one that has started repeating itself and would run on to the reply cap. How
a streaming client sees it (a tail that repeats one unit), and what of the reply it keeps. How a
client streams and stops its server, and what the loop does with a cut reply, are theirs."""
from __future__ import annotations

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
        content, runaway = cut_runaway(self.text, self.period)
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


def cut_runaway(text: str, period: int) -> tuple[str, Runaway]:
    """The reply up to the end of the first copy of its repeated unit (a JSON reply is then
    closed with close_json), and why it was cut. Where the text before the repeats ends as the
    unit does, the copy kept starts that much earlier and misses its end: the text alone cannot
    tell the two apart (`... '"v"'` then ` | sed 's/"//g'` again and again keeps `... | sed
    's/"//g` without its last quote), and a broken command is still far cheaper than the reply
    cap's worth of repeats."""
    start = len(text) - RUNAWAY_SPAN
    while start > 0 and text[start - 1] == text[start - 1 + period]:
        start -= 1
    return text[:start + period], Runaway(unit=text[start:start + period], decoded=text)


def close_json(text: str) -> str:
    """`text` with the strings, objects and arrays it leaves open closed, a half-written escape
    dropped, so an action cut inside its command can still run. Text that was not a JSON value
    cut short stays unparsable, as it was."""
    closers: list[str] = []
    in_string = escaped = False
    escape_at = -1  # where the string's last escape began
    for at, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped, escape_at = True, at
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string, escape_at = True, -1
        elif char in "{[":
            closers.append("}" if char == "{" else "]")
        elif char in "}]" and closers:
            closers.pop()
    if in_string:
        unicode_open = escape_at >= 0 and text[escape_at + 1:escape_at + 2] == "u" \
            and len(text) - escape_at < 6
        if escaped or unicode_open:
            text = text[:escape_at]
        text += '"'
    return text + "".join(reversed(closers))
