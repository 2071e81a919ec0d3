"""Markdown rendering for the evidence: the jinja2 environment (StrictUndefined) and its filters.

What goes into each file is decided by the distill modules; this only formats it.
"""
from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import jinja2

TEMPLATES = Path(__file__).parent / "templates"


def fence(text: str, lang: str = "") -> str:
    """A code fence longer than any backtick run inside `text`, so content cannot break out."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{text}\n{ticks}"


def cell(value: object) -> str:
    """A markdown table cell: one line, pipes escaped."""
    return str(value).replace("\n", " ").replace("|", "\\|")


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.0f}%"


def signed(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:+.0f}pp"


def number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.0f}"


def safe_name(ident: str) -> str:
    """A file name for a task or rollout id: anything outside [A-Za-z0-9._-] becomes '_'."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", ident)


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,  # markdown, not HTML
    )
    env.filters.update(fence=fence, cell=cell, pct=pct, signed=signed, number=number)
    return env


def render(template: str, **context: object) -> str:
    return environment().get_template(template).render(**context)
