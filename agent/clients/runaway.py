"""A runaway reply: one that has started repeating itself and would run on to the reply cap. How
a streaming client sees it (a tail that repeats one unit, or one that counts), and what of the
reply it keeps. How a client streams and stops its server, and what the loop does with a cut
reply, are theirs."""
from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass

from evoharness.agent.model import Runaway

# A reply whose tail repeats one unit at least MIN_COPIES times over at least RUNAWAY_SPAN
# characters is stuck: the 1.5B wrote `| sed 's/"//g'` until its reply cap (~470 tokens, ~40 s on
# 2 cores). 160 characters is 40-80 tokens; no command a task needs repeats one unit that long.
# Units up to MAX_UNIT characters are looked for: it wrote
# `| tr -d '\r\n' | tr -d '\r' | tr -d '\t' | tr -d '\f'` (54) and a 78-character pipeline to the
# cap as well, which three copies in 160 cannot hold.
RUNAWAY_SPAN = 160
MIN_COPIES = 3
MAX_UNIT = 80
# A tail that repeats one unit but for its numbers, each stepping by the same amount from copy to
# copy, counts: the 1.5B wrote `add_item 1 2 3 ... 150` and `add_item 10 20 30 ... 1200` to its
# reply cap, and no tail of one repeated unit ever does. Numbers that vary otherwise (rows of
# data) are not counting. A run of more digits is read as several numbers: Python refuses to turn
# 4,300 digits and more into an int.
_NUMBER = re.compile(r"\d{1,18}")


class StreamedText:
    """A reply's text as it streams in, piece by piece: `add` says when it has run away, `kept`
    what of it to keep (a JSON reply closed) and why."""

    def __init__(self, json_reply: bool) -> None:
        self.json_reply = json_reply
        self.text = ""
        self.period: int | None = None  # of the unit the tail repeats, in characters
        self.counting: int | None = None  # of the unit the tail counts with, in items

    def add(self, piece: str) -> bool:
        self.text += piece
        self.period = runaway_unit(self.text)
        self.counting = None if self.period is not None else counting_unit(self.text)
        return self.period is not None or self.counting is not None

    def kept(self) -> tuple[str, Runaway | None]:
        if self.period is not None:
            content, runaway = cut_runaway(self.text, self.period, self.json_reply)
        elif self.counting is not None:
            content, runaway = cut_counting(self.text, self.counting, self.json_reply)
        else:
            return self.text, None
        return (close_json(content) if self.json_reply else content), runaway


def runaway_unit(text: str) -> int | None:
    """The length of the shortest unit (at most MAX_UNIT characters) that the text's tail repeats
    at least MIN_COPIES times and over at least its last RUNAWAY_SPAN characters; None when the
    tail does not repeat."""
    for period in range(1, MAX_UNIT + 1):
        span = max(RUNAWAY_SPAN, MIN_COPIES * period)
        if len(text) < span:
            return None
        tail = text[-span:]
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
    return _kept(text, start, list(ends), json_reply)


def counting_unit(text: str) -> int | None:
    """The length in items (a number is one item, any other character one) of the unit that the
    text's last RUNAWAY_SPAN characters repeat at least MIN_COPIES times but for their numbers,
    each of which steps by the same amount from copy to copy, some not by 0; None when the tail
    does not count. A number cut by the span's start, and the last one (its digits may still be
    coming), are left out."""
    if len(text) < RUNAWAY_SPAN:
        return None
    begin, end = len(text) - RUNAWAY_SPAN, len(text)
    while 0 < begin < end and text[begin].isdigit() and text[begin - 1].isdigit():
        begin += 1
    while end > begin and text[end - 1].isdigit():
        end -= 1
    items = _items(text, begin, end)
    shape = "".join(item for item, _, _ in items)
    for period in range(1, len(items) // MIN_COPIES + 1):
        if shape[period:] == shape[:-period] and _steps(items, period) is not None:
            return period
    return None


def cut_counting(text: str, period: int, json_reply: bool = False) -> tuple[str, Runaway]:
    """The reply up to the end of the first copy of the unit it counts with (`add_item 1 2 3 ...`
    keeps `add_item 1`), found by walking back from the counting tail while the copies keep
    their shape and steps; a JSON reply, as `cut_runaway` does, keeps the first cut within one
    unit after that whose open string closes its quotes."""
    end = len(text)
    while end > 0 and text[end - 1].isdigit():
        end -= 1
    items = _items(text, 0, end)
    tail = next(i for i, (_, at, _) in enumerate(items) if at >= len(text) - RUNAWAY_SPAN)
    steps = _steps(items, period, since=tail) or {}
    start = len(items) - period
    while start > 0 and items[start - 1][0] == items[start - 1 + period][0] and (
            _step(items, start - 1, period) in (None, steps.get((start - 1) % period))):
        start -= 1
    ends = [at for _, at, _ in items[start + period:start + 2 * period]]
    return _kept(text, items[start][1], ends, json_reply)


def _items(text: str, begin: int, end: int) -> list[tuple[str, int, int | None]]:
    """text[begin:end] as items: each number as "#" (with where it starts and its value), each
    other character as itself (with where it is)."""
    items: list[tuple[str, int, int | None]] = []
    at = begin
    for number in _NUMBER.finditer(text, begin, end):
        items += [(char, at + i, None) for i, char in enumerate(text[at:number.start()])]
        items.append(("#", number.start(), int(number.group())))
        at = number.end()
    return items + [(char, at + i, None) for i, char in enumerate(text[at:end])]


def _steps(items: list[tuple[str, int, int | None]], period: int, since: int = 0
           ) -> dict[int, int] | None:
    """Each number's step from one copy of the unit to the next, by its place in the unit (its
    index modulo `period`), over items[since:]; None unless every place keeps one step and some
    step is not 0."""
    steps: dict[int, int] = {}
    for at in range(since + period, len(items)):
        step = _step(items, at, period)
        if step is not None and steps.setdefault(at % period, step) != step:
            return None
    return steps if any(steps.values()) else None


def _step(items: list[tuple[str, int, int | None]], at: int, period: int) -> int | None:
    value, before = items[at][2], items[at - period][2]
    return None if value is None or before is None else value - before


def _kept(text: str, start: int, ends: list[int], json_reply: bool) -> tuple[str, Runaway]:
    """text up to the first of `ends` (the first copy's end, then cuts within the next copy): for
    a JSON reply, the first whose open string closes its quotes."""
    end = next((e for e in ends if json_reply and _quotes_paired(text[:e])), ends[0])
    return text[:end], Runaway(unit=text[start:ends[0]], decoded=text)


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
