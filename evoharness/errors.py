"""The project's one base exception: every user-facing error says what, where and what to do.

The CLI turns an EvoError into a one-paragraph message and exit code 2; other exceptions are bugs.
"""
from __future__ import annotations

import reprlib
from pathlib import Path
from typing import Any

SHOWN_CHARS = 200  # of an offending value: enough to recognise it, however large it is


class _ShortRepr(reprlib.Repr):
    """Like repr() for ordinary values; for a huge one only the shown part is ever built."""

    def __init__(self) -> None:
        super().__init__()
        self.maxlevel = 6
        self.maxdict = self.maxlist = self.maxtuple = self.maxset = self.maxfrozenset = 40
        self.maxstring = self.maxother = self.maxlong = SHOWN_CHARS * 2

    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > 4 * SHOWN_CHARS:  # Python refuses to print ints past 4300 digits
            return f"<an integer of {x.bit_length()} bits>"
        return super().repr_int(x, level)


_SHORT = _ShortRepr()


def shown(value: Any) -> str:
    """`value` as an error shows it: its repr, at most about SHOWN_CHARS; a long list, tuple or
    set loses whole items (the count of the rest is said), never half an id."""
    text = _SHORT.repr(value)
    if len(text) <= SHOWN_CHARS:
        return text
    if isinstance(value, (list, tuple, set, frozenset)):
        items = list(value)
        parts: list[str] = []
        for item in items:
            part = _SHORT.repr(item)
            if parts and len(", ".join([*parts, part])) > SHOWN_CHARS - 24:
                break
            parts.append(part[:SHOWN_CHARS])
        rest = len(items) - len(parts)
        opening, closing = ("(", ")") if isinstance(value, tuple) else \
            ("{", "}") if isinstance(value, (set, frozenset)) else ("[", "]")
        more = f", ... {rest} more" if rest else ""
        return f"{opening}{', '.join(parts)}{more}{closing}"
    return text[:SHOWN_CHARS - 3] + "..."


class EvoError(Exception):
    """An error a user can act on: names the file, the field and the offending value."""

    keeps_lines = False  # the CLI shows it on one line; True where its lines mean something

    def __init__(
        self,
        message: str,
        *,
        file: str | Path | None = None,
        field: str | None = None,
        value: Any = None,
        hint: str | None = None,
    ) -> None:
        self.message = message
        self.file = str(file) if file is not None else None
        self.field = field
        self.value = value
        self.hint = hint
        super().__init__(str(self))

    def __str__(self) -> str:
        where = ": ".join(part for part in (self.file, self.field) if part)
        text = f"{where}: {self.message}" if where else self.message
        if self.value is not None:
            text += f" (got {shown(self.value)})"
        if self.hint:  # a sentence of its own after the full stop
            text += f". {self.hint[:1].upper()}{self.hint[1:]}"
        return text


MAX_PROBLEMS = 30  # listed in one error; bad input must not make the error itself huge


class MoreProblems(EvoError):
    """Stands for the problems past MAX_PROBLEMS, so a list passed on keeps its true count."""

    def __init__(self, count: int) -> None:
        self.count = count
        super().__init__(f"... and {count} more problem(s) not listed",
                         hint="fix the ones above first")


class ValidationFailed(EvoError):
    """Several problems found at once (a harness, a task, a manifest); each is its own EvoError.
    Past MAX_PROBLEMS the rest are counted in one last problem, not listed."""

    keeps_lines = True  # a line per problem

    def __init__(self, what: str, problems: list[EvoError]) -> None:
        listed = [p for p in problems if not isinstance(p, MoreProblems)]
        unlisted = sum(p.count for p in problems if isinstance(p, MoreProblems))
        unlisted += max(len(listed) - MAX_PROBLEMS, 0)
        self.problems = listed[:MAX_PROBLEMS] + ([MoreProblems(unlisted)] if unlisted else [])
        total = min(len(listed), MAX_PROBLEMS) + unlisted
        if total == 1:  # one line: the problem names its own file, else says what it is in
            only = self.problems[0]
            super().__init__(str(only) if only.file else f"{what} is invalid: {only}")
            return
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"{what} is invalid ({total} problem(s)):\n{lines}")


def validation_problems(error: Any, *, file: str | Path | None = None,
                        field_prefix: str = "") -> list[EvoError]:
    """One EvoError per problem in a pydantic ValidationError, each naming `file`, the field (its
    dotted location under `field_prefix`) and the value: pydantic's own text ("1 validation error
    for X ... For further information visit ...") is for programmers, not for whoever wrote the
    file."""
    problems = []
    for item in error.errors(include_url=False):
        location = ".".join(str(part) for part in item["loc"])
        field = ".".join(part for part in (field_prefix, location) if part) or None
        if item["type"] == "missing":
            problems.append(EvoError("is required but missing", file=file, field=field))
        elif item["type"] == "extra_forbidden":
            problems.append(EvoError("is not a known field", file=file, field=field,
                                     value=item.get("input")))
        else:  # a validator's own ValueError reads as its text, not "Value error, ..."
            message = item["msg"].removeprefix("Value error, ")
            problems.append(EvoError(message, file=file, field=field, value=item.get("input")))
    return problems


def from_validation(error: Any, what: str, *, file: str | Path | None = None,
                    field_prefix: str = "") -> ValidationFailed:
    """The error to raise for a pydantic ValidationError: ValidationFailed(`what`) listing each
    problem (one line when there is one)."""
    return ValidationFailed(what, validation_problems(error, file=file, field_prefix=field_prefix))
