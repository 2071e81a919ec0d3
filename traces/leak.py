"""The leak guard: evidence never shows test-file text or anything about held-out tasks.

Queries filter held-out rollouts out; this module redacts what slips into rendered text and scans
the written files as a last check. Which rows are held out is the caller's (and the schema's) call.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from evoharness.errors import EvoError

# Test-file lines shorter than this are ordinary code ("import os", "return x") that a rollout may
# legitimately contain; flagging them would stop iterations on coincidences.
MIN_SNIPPET = 16
REDACTED = "[redacted]"

# A verifier line worth showing: pytest's "E   ..." detail lines, FAILED summaries, lines naming an
# assertion or an error, and the verifier's own "[no reward file ...]" notes. Indented and
# ">"-prefixed lines are pytest echoing the test's source, so they never qualify.
FAILING_LINE_REGEX = r"^(E\s|FAILED\b|\[.*\]$|[^\s>].*(assert|Error|FAILED))"


def snippets(forbidden: Iterable[str]) -> list[str]:
    """The forbidden strings long enough to be evidence of a leak rather than chance."""
    return sorted({s.strip() for s in forbidden if len(s.strip()) >= MIN_SNIPPET}, key=len, reverse=True)


def id_pattern(ids: Iterable[str]) -> re.Pattern[str] | None:
    """Matches any of `ids` as a whole token, so hidden "sort" does not match visible "sort-list"."""
    ids = sorted({i for i in ids if i}, key=len, reverse=True)
    if not ids:
        return None
    alternatives = "|".join(re.escape(i) for i in ids)
    return re.compile(rf"(?<![\w-])(?:{alternatives})(?![\w-])")


class Redactor:
    """Replaces held-out task ids and test-file snippets in text about to be written."""

    def __init__(self, hidden_ids: Iterable[str] = (), forbidden: Iterable[str] = ()) -> None:
        self.ids = id_pattern(hidden_ids)
        self.snippets = snippets(forbidden)

    def __call__(self, text: str) -> str:
        for snippet in self.snippets:
            if snippet in text:
                text = text.replace(snippet, REDACTED)
        return self.ids.sub(REDACTED, text) if self.ids else text


def assert_no_leak(
    evidence_dir: str | Path, forbidden_strings: Iterable[str], *, hidden_ids: Iterable[str] = ()
) -> None:
    """Raise EvoError naming the first evidence file that contains a test-file snippet (of at least
    MIN_SNIPPET characters) or a held-out task id (as a whole token, in its text or its name)."""
    found = snippets(forbidden_strings)
    ids = id_pattern(hidden_ids)
    for path in sorted(Path(evidence_dir).rglob("*")):
        if not path.is_file():
            continue
        text = path.read_text(errors="replace")
        for subject in (path.name, text):
            hit = next((s for s in found if s in subject), None)
            match = ids.search(subject) if ids else None
            if hit or match:
                raise EvoError(
                    "evidence leaks held-out or test-file content",
                    file=path,
                    value=hit or match.group(0),
                    hint="distill must filter held-out rollouts and redact verifier output",
                )
