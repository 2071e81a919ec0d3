"""The docs as a reader meets them: the README stays a front door (about a screenful or three,
lines a terminal shows whole) and links every manual page; every relative link in the README
and docs/ leads somewhere; a lab notebook page says it is one."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
LINK = re.compile(r"\]\(([^)\s]+)\)")


def pages() -> list[Path]:
    return [README, *sorted(DOCS.rglob("*.md"))]


def test_the_readme_is_a_front_door() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) <= 110, f"README.md has {len(lines)} lines: the manual belongs in docs/"
    long = [n for n, line in enumerate(lines, 1) if len(line) > 100]
    assert not long, f"README.md lines over 100 characters: {long}"


def test_the_readme_links_every_manual_page() -> None:
    linked = {(ROOT / target.split("#")[0]).resolve()
              for target in LINK.findall(README.read_text()) if "://" not in target}
    manual = {p.resolve() for p in DOCS.glob("*.md")}
    assert not manual - linked, f"pages the README does not link: {sorted(manual - linked)}"


def test_every_relative_link_leads_somewhere() -> None:
    broken = []
    for page in pages():
        text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
        for target in LINK.findall(text):
            if "://" in target or target.startswith(("#", "mailto:")):
                continue
            if not (page.parent / target.split("#")[0]).exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert not broken, f"links to nothing: {broken}"


def test_a_lab_page_says_it_is_a_lab_notebook() -> None:
    lab = sorted((DOCS / "lab").glob("*.md"))
    assert lab
    for page in lab:
        opening = " ".join(page.read_text().split("\n## ", 1)[0].split())
        assert "lab notebook" in opening and "not re-derived from committed records" in opening, (
            f"{page.relative_to(ROOT)} does not open by saying it is a lab notebook")


def test_every_module_a_manual_page_names_exists() -> None:
    """A path into the package or the benchmarks (`evolve/evaluate/exam.py`) that a README or
    manual page names is there: a move that forgets a page fails. The lab is as it was."""
    folders = "|".join(["workspace", "agent", "tasks", "traces", "debugger", "manifests",
                        "evolve", "evoharness", "benchmarks"])
    path = re.compile(rf"(?<![\w/.-])((?:{folders})/[\w/.-]*\w\.(?:py|toml|json|txt|yaml))\b")
    missing = [f"{page.relative_to(ROOT)}: {name}"
               for page in pages() if "lab" not in page.relative_to(ROOT).parts
               for name in sorted(set(path.findall(page.read_text())))
               if "NAME" not in name and not (ROOT / name).exists()]
    assert not missing, f"pages name what is not there: {missing}"


def test_the_readmes_layout_is_the_repositorys() -> None:
    """The README's layout table names folders that exist, and every top-level folder that holds
    a package or the docs is in it."""
    table = README.read_text().split("## Layout", 1)[1]
    named = re.findall(r"^\| `([\w/]+)/` \|", table, re.M)
    assert named and all((ROOT / folder).is_dir() for folder in named), named
    top = {p.parent.name for p in ROOT.glob("*/__init__.py")} | {"docs", "benchmarks"}
    assert top <= set(named), f"folders the README's layout leaves out: {sorted(top - set(named))}"
