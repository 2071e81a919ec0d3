"""Rendering a run's report: one self-contained HTML page (plotly.js inlined once, every diff
embedded) from the template. What goes into it is data.py's, the figures are plots.py's."""
from __future__ import annotations

from pathlib import Path

import jinja2
from markupsafe import Markup
from plotly.offline import get_plotlyjs

from evoharness.files import write_atomic
from evoharness.evolve.ledger import RunPaths

from .data import ReportData, collect
from .plots import all_plots

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("evoharness.evolve.report", "templates"),
    undefined=jinja2.StrictUndefined,
    autoescape=True,
    keep_trailing_newline=True,
)


def _diff_class(line: str) -> str:
    """CSS class of one unified-diff line (file headers before +/- so '+++' is not an addition)."""
    for prefix, css in (("+++", "meta"), ("---", "meta"), ("@@", "hunk"), ("+", "add"),
                        ("-", "del"), ("diff ", "meta"), ("index ", "meta")):
        if line.startswith(prefix):
            return css
    return ""


_ENV.filters["diff_class"] = _diff_class


def render_report(data: ReportData) -> str:
    """The whole page as text; viewing it needs no network."""
    return _ENV.get_template("report.html.j2").render(
        summary=data.summary(), plots=all_plots(data), changes=data.changes, exam=data.exam,
        transfers=data.transfers, lineage=data.lineage, model_time=data.model_time,
        plotly_js=Markup(get_plotlyjs()),  # plotly's own bundle, inlined as plotly does it
    )


def write_report(run_dir: str | Path, out: str | Path | None = None) -> Path:
    """Render the run's report to `out` (default RUN/report.html), atomically."""
    target = Path(out) if out is not None else RunPaths(root=Path(run_dir)).report
    write_atomic(target, render_report(collect(run_dir)))
    return target
