"""Every figure README.md and the manual quote is derived again from its committed record
(docs/figures.toml, tests/docs/figures.py): the quote, filled with the values derived from the
record, must be on its page, and the page must name the record and the command that made it. A
figure whose record is gone, or whose text drifted from what the record gives, fails."""
from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict, Field

from tests.docs import figures

ROOT = Path(__file__).resolve().parents[2]
REGISTRY = ROOT / "docs" / "figures.toml"
RECORD_BYTES = 256 * 1024  # a record is small text, read by a person as well as by this test
RECORD_HOMES = ("benchmarks/results/", "docs/")
TEXT_SUFFIXES = {".json", ".txt", ".yaml", ".toml", ".md"}


class Figure(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    page: str  # README.md or a docs page, relative to the repository
    quote: str  # the text on the page, with {name} (and {name:format}) where derived values go
    record: str  # a committed file (or a folder of them) the values are read from
    command: str  # what made the record; the page names it
    derive: str  # a function of tests/docs/figures.py
    args: dict[str, object] = Field(default_factory=dict)


def registry() -> list[Figure]:
    return [Figure(**entry) for entry in tomllib.loads(REGISTRY.read_text())["figure"]]


def flat(text: str) -> str:
    """Text as a reader sees it: line breaks and indentation are one space."""
    return " ".join(text.split())


def tracked(path: Path) -> list[Path]:
    """The files under `path` git tracks (a fresh clone has them); [] if none."""
    out = subprocess.run(["git", "ls-files", "-z", "--", str(path.relative_to(ROOT))], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    return [ROOT / name for name in out.split("\0") if name]


def record_names(figure: Figure) -> set[str]:
    """How a page may name a figure's record: its path from the repository or from the page's
    folder; a record under docs/TOPIC/ also by that folder (a page links its run's files so)."""
    record, home = Path(figure.record), Path(figure.page).parent
    names = {str(record)}
    if record.is_relative_to(home) and home != Path("."):
        names.add(str(record.relative_to(home)))
    folder = record if (ROOT / record).is_dir() else record.parent
    if folder.parts[0] == "docs" and len(folder.parts) > 1:
        names.add(f"{folder}/")
        if folder.is_relative_to(home) and home != Path("."):
            names.add(f"{folder.relative_to(home)}/")
    return names


FIGURES = registry()


def test_the_registry_lists_figures_of_pages_outside_the_lab() -> None:
    assert FIGURES, "docs/figures.toml lists no figure"
    for figure in FIGURES:
        assert figure.page == "README.md" or (figure.page.startswith("docs/")
                                             and not figure.page.startswith("docs/lab/")), figure
        assert figure.record.startswith(RECORD_HOMES), figure.record
        assert hasattr(figures, figure.derive), f"no function {figure.derive} in figures.py"
        assert re.search(r"\{\w+", figure.quote), f"{figure.quote!r} derives nothing"


@pytest.mark.parametrize("figure", FIGURES, ids=lambda f: f"{f.page}:{f.quote[:40]}")
def test_each_quoted_figure_is_derived_again_from_its_committed_record(figure: Figure) -> None:
    record = ROOT / figure.record
    assert record.exists(), f"{figure.record}, the record of {figure.quote!r}, is gone"
    files = tracked(record)
    assert files, f"{figure.record} is not committed"
    for file in (f for f in files if f.suffix in TEXT_SUFFIXES):  # a run's picture is no record
        assert file.stat().st_size <= RECORD_BYTES, f"{file} is not a small record"
        file.read_text(encoding="utf-8")  # text, not binary
    values = getattr(figures, figure.derive)(record, **figure.args)
    expected = flat(figure.quote.format(**values))
    page = flat((ROOT / figure.page).read_text())
    assert expected in page, (f"{figure.page} does not say {expected!r} (derived from "
                              f"{figure.record}); the page or the record changed")
    assert any(name in page for name in record_names(figure)), (
        f"{figure.page} does not name {figure.record}")
    assert flat(figure.command) in page, f"{figure.page} does not name `{figure.command}`"


def _benchmark_records() -> list[Path]:
    return sorted((ROOT / "benchmarks" / "results").glob("*.txt"))


SLOW_RECORDS = {"exam.txt"}  # 2,000 simulated exams per setting


@pytest.mark.parametrize("record", [
    pytest.param(r, marks=pytest.mark.slow) if r.name in SLOW_RECORDS else r
    for r in _benchmark_records()], ids=lambda r: r.name)
def test_a_benchmark_record_is_what_its_command_prints_today(record: Path) -> None:
    """A record under benchmarks/results/ opens with `# python benchmarks/NAME.py ARGS`; the
    benchmarks kept there read no model and no clock, so running it again prints the record."""
    first, *kept = record.read_text().splitlines()
    assert first.startswith("# python benchmarks/"), f"{record} does not name its command"
    _, script, *args = first[2:].split()
    out = subprocess.run([sys.executable, script, *args], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.splitlines() == kept, f"`{first[2:]}` no longer prints {record.name}"
