"""The project's one base exception: every user-facing error says what, where and what to do.

The CLI turns an EvoError into a one-paragraph message and exit code 2; other exceptions are bugs.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any


class EvoError(Exception):
    """An error a user can act on: names the file, the field and the offending value."""

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
            shown = repr(self.value)
            text += f" (got {shown[:200]})"
        if self.hint:
            text += f". {self.hint}"
        return text


class ValidationFailed(EvoError):
    """Several problems found at once (a harness, a task, a manifest); each is its own EvoError."""

    def __init__(self, what: str, problems: list[EvoError]) -> None:
        self.problems = problems
        lines = "\n".join(f"  - {p}" for p in problems)
        super().__init__(f"{what} is invalid ({len(problems)} problem(s)):\n{lines}")
