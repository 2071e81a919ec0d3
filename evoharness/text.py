"""Text: what came from outside the process (a model's reply, a sandbox's output) made encodable
(a lone UTF-16 surrogate, which JSON escapes can carry but no UTF-8 encoder accepts, becomes
U+FFFD), counts in words, and comma-separated lists."""
from __future__ import annotations

import json
import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")


def scrub(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD (the same string when there is none)."""
    if _SURROGATE.search(text) is None:  # the common case: no copy
        return text
    # Through UTF-16 so that a valid pair (which a str never holds split) would survive.
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def scrub_json(value: Any) -> Any:
    """`value` (parsed JSON: dicts, lists, strings, numbers) with every string scrubbed, keys too.
    Through the C encoder and decoder, so a value as deep as json.loads accepts never recurses here."""
    text = json.dumps(value, ensure_ascii=False, default=str)  # str: a Path in an event's data
    return value if _SURROGATE.search(text) is None else json.loads(scrub(text))


def comma_list(text: str) -> list[str]:
    """"a, b,,c" as ["a", "b", "c"]: an option's comma-separated names, blanks dropped."""
    return [item.strip() for item in text.split(",") if item.strip()]


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """"1 task", "3 tasks", "0 losses" (`plural` where adding an s is wrong)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
