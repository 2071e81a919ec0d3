"""evoharness: shared foundations every stage may import (the project's error type and file helpers).

The stages themselves are the top-level packages named in DESIGN.md: workspace, agent, tasks,
traces, debugger, manifests, evolve.
"""
