"""The run report: data.py gathers a run's numbers, changes and diffs; plots.py draws them;
build.py renders one self-contained HTML page. The CLI commands live in evolve/cli/report.py."""
