"""The report as a person sees it: rendered from a recorded run, opened in headless Chromium with
no network, and checked from the DOM after plotly ran: every plot drew its points, every change row
is there, and the first screen holds the answer and the path. Screenshots are kept at
/tmp/evoharness-report.png and /tmp/evoharness-report-first-screen.png for a person to look at."""
from __future__ import annotations

import html
import re
import shutil
import subprocess
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path


from evoharness.evolve.report.build import write_report
from evoharness.evolve.report.data import collect
from tests.fixtures.recorded_run import build_recorded_run, record_exam

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOT_COPY = Path("/tmp/evoharness-report.png")
# Headless, offline, no first-run or background traffic; virtual time lets plotly finish drawing.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--virtual-time-budget=10000"]
# HTML elements without an end tag: they never enclose anything.
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
         "track", "wbr"}


class _FigureIndex(HTMLParser):
    """Per element whose id starts with "fig-": its attributes and the "tag.class" inside it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, str | None]] = []  # (tag, figure id if it opens a figure)
        self.inside: dict[str, Counter[str]] = {}
        self.attrs: dict[str, dict[str, str | None]] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        for _tag, owner in self.stack:
            if owner is not None:
                for css in (found.get("class") or "").split() or [""]:
                    self.inside[owner][f"{tag}.{css}" if css else tag] += 1
        if tag in _VOID:
            return
        owner = found.get("id") if (found.get("id") or "").startswith("fig-") else None
        if owner is not None:
            self.attrs[owner] = found
            self.inside[owner] = Counter()
        self.stack.append((tag, owner))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in _VOID:
            self.stack.pop()

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                return


def _chromium(tmp: Path, page: Path, *extra: str) -> subprocess.CompletedProcess:
    # A missing browser fails the test instead of skipping it: the README promises this check.
    assert CHROMIUM.exists(), f"{CHROMIUM} is missing: install.sh installs Debian's chromium"
    command = [str(CHROMIUM), *FLAGS, f"--user-data-dir={tmp / 'profile'}", *extra,
               page.as_uri()]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)


def test_report_draws_every_plot_and_row_in_chromium(tmp_path):
    run = build_recorded_run(tmp_path / "run")
    page = write_report(run)
    dom = _chromium(tmp_path, page, "--dump-dom").stdout
    figures = _FigureIndex()
    figures.feed(dom)
    assert len(figures.attrs) == 5
    for figure, inside in figures.inside.items():
        expected = int(figures.attrs[figure]["data-points"])
        assert expected > 0, figure
        if figure == "fig-task-heatmap":
            # The heatmap is one drawn image plus a text label per cell.
            assert inside["image"] == 1 and inside["g.heatmap-label"] == expected, inside
        else:
            # Scatter markers are path.point, bars are g.point: one per data point.
            assert inside["path.point"] + inside["g.point"] == expected, (figure, inside)
    for row in collect(run).changes:
        assert f'id="change-{row.change_id}"' in dom and f'id="diff-{row.commit}"' in dom

    shot = tmp_path / "report.png"
    _chromium(tmp_path, page, f"--screenshot={shot}", "--window-size=1400,4000")
    assert shot.stat().st_size > 10_000
    shutil.copyfile(shot, SCREENSHOT_COPY)
    print(f"report screenshot: {shot} (copy at {SCREENSHOT_COPY})")


# Run in the page after it is drawn: where the answer, the path and what follows them are.
_WHERE = """<script>
  for (const id of ["answer", "lineage", "summary"]) {
    const box = document.getElementById(id).getBoundingClientRect();
    document.body.dataset[id] = Math.round(box.top) + "," + Math.round(box.bottom);
  }
</script>
</body>"""
FIRST_SCREEN = (1400, 900)  # a laptop's browser window
FIRST_SCREEN_COPY = Path("/tmp/evoharness-report-first-screen.png")


def test_the_first_screen_holds_the_answer_and_the_whole_path(tmp_path):
    """The morning view: with a recorded exam (final vs seed, vs the matched-budget baseline),
    the answer and every change of the path are laid out above the fold of a 1400x900 window,
    before the summary tiles and the plots."""
    run = build_recorded_run(tmp_path / "run")
    exam = record_exam(run)
    page = write_report(run)
    probe = tmp_path / "probe.html"
    probe.write_text(page.read_text().replace("</body>", _WHERE, 1))
    width, height = FIRST_SCREEN
    dom = _chromium(tmp_path, probe, "--dump-dom", f"--window-size={width},{height}").stdout
    body = re.search(r"<body([^>]*)>", dom).group(1)
    where = {name: tuple(map(int, box.split(",")))
             for name, box in re.findall(r'data-(\w+)="(-?\d+,-?\d+)"', body)}
    assert where["answer"][0] < where["lineage"][0] < where["summary"][0]
    assert where["lineage"][1] <= height, where  # the whole path without scrolling
    for line in exam.answer():
        assert html.escape(line) in dom
    for row in collect(run).lineage:
        assert f'id="path-{row.change_id}"' in dom

    shot = tmp_path / "first-screen.png"
    _chromium(tmp_path, page, f"--screenshot={shot}", f"--window-size={width},{height}")
    shutil.copyfile(shot, FIRST_SCREEN_COPY)
    print(f"first screen: {shot} (copy at {FIRST_SCREEN_COPY})")
