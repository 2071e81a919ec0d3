"""The report's plotly figures, one function per plot, each as a JSON spec the page draws once it
is laid out (plotly.js is embedded once by build.py), with a stable id and its number of points."""
from __future__ import annotations

import json
from typing import Any

import plotly.graph_objects as go
from pydantic import BaseModel

from evoharness.evolve.evaluate.compare import Comparison
from evoharness.manifests.scores import Scores

from .data import ReportData

# AHE (arXiv 2604.25850): the evolve agent's own prediction scores, the bar to beat. A trial
# observes fixes only on predicted tasks, so fix recall is not measured (manifests/scores.py).
AHE_REFERENCE = {
    "fix precision": 0.337, "regression precision": 0.118, "regression recall": 0.111,
}
_SCORE_FIELDS = {
    "fix precision": "fix_precision", "regression precision": "reg_precision",
    "regression recall": "reg_recall",
}
_COLORS = {"fix precision": "#1b9e77", "regression precision": "#d95f02",
           "regression recall": "#fc8d62"}
VERDICT_ORDER = ("effective", "not_shown", "not_carried", "regression", "untestable", "manual")
_VERDICT_COLORS = {"effective": "#1a9850", "not_shown": "#bababa", "not_carried": "#91bfdb",
                   "regression": "#d73027",
                   "untestable": "#fee08b", "manual": "#4575b4"}


class Plot(BaseModel):
    id: str  # the wrapper's id is "fig-<id>", plotly's div inside it "plot-<id>"
    title: str
    spec: dict[str, Any]  # plotly's {"data": ..., "layout": ...}, plain JSON values
    points: int


def _pct(value: float | None) -> float | None:
    return None if value is None else round(100 * value, 1)


def _layout(fig: go.Figure, title: str, y_title: str, **extra: Any) -> go.Figure:
    layout = dict(title=title, template="plotly_white", height=380,
                  margin=dict(l=60, r=60, t=60, b=50), yaxis_title=y_title,
                  xaxis=dict(title="iteration", dtick=1), legend=dict(orientation="h", y=-0.2),
                  modebar=dict(orientation="v"))  # a vertical toolbar keeps off the title
    fig.update_layout(**{**layout, **extra})
    return fig


def _points(fig: go.Figure) -> int:
    """Data points plotly will draw: non-empty y values, or non-empty heatmap cells."""
    total = 0
    for trace in fig.data:
        values = [v for row in trace.z for v in row] if trace.type == "heatmap" else trace.y
        total += sum(v is not None for v in values or ())
    return total


def _plot(plot_id: str, fig: go.Figure) -> Plot:
    # Through plotly's own JSON encoder: figures may hold numpy arrays.
    return Plot(id=plot_id, title=fig.layout.title.text, spec=json.loads(fig.to_json()),
                points=_points(fig))


def pass_rate(data: ReportData) -> Plot:
    fig = go.Figure()
    for name, field in (("train", "pass_rate_train"), ("held-out", "pass_rate_heldout")):
        fig.add_trace(go.Scatter(x=data.iterations, name=name, mode="lines+markers",
                                 y=[_pct(getattr(t, field)) for t in data.totals]))
    return _plot("pass-rate", _layout(fig, "pass@1 per iteration", "pass@1 (%)",
                                      yaxis_range=[0, 105]))


def task_heatmap(data: ReportData) -> Plot:
    labels = [row.task_id + (" (held-out)" if row.split == "heldout" else "") for row in data.heat]
    fig = go.Figure(go.Heatmap(
        z=[[_pct(rate) for rate in row.rates] for row in data.heat], x=data.iterations, y=labels,
        zmin=0, zmax=100, colorscale="RdYlGn", texttemplate="%{z:.0f}%",
        colorbar=dict(title="pass %"), hoverongaps=False,
    ))
    _layout(fig, "pass rate per task and iteration", "task",
            height=max(300, 60 + 36 * len(labels)))
    fig.update_yaxes(autorange="reversed")
    return _plot("task-heatmap", fig)


def verdicts(data: ReportData) -> Plot:
    counts = data.verdict_counts()
    judged = sorted(counts)
    fig = go.Figure()
    for kind in VERDICT_ORDER:
        # Only the iterations that had this verdict: an empty stack segment is not a data point.
        x = [it for it in judged if counts[it][kind]]
        if x:
            fig.add_trace(go.Bar(x=x, y=[counts[it][kind] for it in x], name=kind,
                                 marker_color=_VERDICT_COLORS[kind]))
    fig.add_trace(go.Scatter(x=judged, y=[_pct(data.revert_share(it)) for it in judged],
                             name="reverted (%)", mode="lines+markers", yaxis="y2",
                             line=dict(color="black", dash="dash")))
    return _plot("verdicts", _layout(
        fig, "verdicts per judging iteration, and how often the loop said no", "changes",
        barmode="stack",
        yaxis2=dict(title="reverted (%)", overlaying="y", side="right", range=[0, 105],
                    dtick=25, showgrid=False),
    ))


def prediction_scores(data: ReportData) -> Plot:
    judged = sorted(data.scores)
    fig = go.Figure()
    for name, field in _SCORE_FIELDS.items():
        scores: list[Scores] = [data.scores[it] for it in judged]
        fig.add_trace(go.Scatter(x=judged, y=[_pct(getattr(s, field)) for s in scores],
                                 name=name, mode="lines+markers",
                                 line=dict(color=_COLORS[name])))
        fig.add_hline(y=100 * AHE_REFERENCE[name], line_dash="dot", line_color=_COLORS[name],
                      annotation_text=f"AHE {name} {100 * AHE_REFERENCE[name]:.1f}%",
                      # precision labels left, recall right: AHE's regression pair is 0.7 apart
                      annotation_position="top left" if "precision" in name else "top right",
                      annotation_font_size=10)
    return _plot("prediction-scores", _layout(
        fig, "fix and regression precision / recall (dotted: AHE's figures)", "%",
        yaxis_range=[0, 105]))


def cost(data: ReportData) -> Plot:
    fig = go.Figure()
    fig.add_trace(go.Bar(x=data.iterations, name="tokens (in + out)", marker_color="#8da0cb",
                         y=[t.tokens_in + t.tokens_out for t in data.totals]))
    fig.add_trace(go.Scatter(x=data.iterations, name="wall time (s)", mode="lines+markers",
                             yaxis="y2", y=[round(t.wall_time_s, 1) for t in data.totals],
                             line=dict(color="#e78ac3")))
    return _plot("cost", _layout(fig, "tokens and wall time per iteration", "tokens",
                                 yaxis2=dict(title="wall time (s)", overlaying="y",
                                             side="right", rangemode="tozero",
                                             showgrid=False)))


def comparisons(data: ReportData) -> Plot:
    """The exam's and the transfer tables' paired differences, each with its interval."""
    rows: list[tuple[str, Comparison]] = []
    if data.exam is not None:
        rows += [("exam: noise floor (seed vs seed)", data.exam.noise_floor)]
        rows += [(f"exam: {c.b} vs {c.a}", c) for c in data.exam.comparisons]
    rows += [(f"{t.name}: {r.comparison.b} vs {r.comparison.a} ({r.model}, {r.suite})",
              r.comparison) for t in data.transfers for r in t.rows]
    shown = [(label, c) for label, c in rows if c.mean is not None]
    fig = go.Figure(go.Scatter(
        x=[_pct(c.mean) for _, c in shown], y=[label for label, _ in shown], mode="markers",
        marker=dict(size=10, color="#4575b4"), name="B - A",
        error_x=dict(type="data", array=[_pct(c.hi - c.mean) for _, c in shown],
                     arrayminus=[_pct(c.mean - c.lo) for _, c in shown])))
    fig.add_vline(x=0, line_dash="dot", line_color="#777")
    _layout(fig, "paired differences with their intervals (pass@1 points)", "",
            height=max(260, 90 + 48 * len(shown)), xaxis=dict(title="B - A (points)",
                                                              range=[-105, 105]))
    fig.update_yaxes(autorange="reversed")
    return _plot("comparisons", fig)


def all_plots(data: ReportData) -> list[Plot]:
    plots = [f(data) for f in (pass_rate, task_heatmap, verdicts, prediction_scores, cost)]
    if data.exam is not None or data.transfers:
        plots.append(comparisons(data))
    return plots
