"""The evolve agent: an agent on the same runtime that reads the evidence and traces (train split
only) and commits harness changes, each with its manifest entry. The iteration loop saves them."""
from .session import DEFAULT_SETTINGS, EvolveOutcome, run_evolve_agent

__all__ = ["DEFAULT_SETTINGS", "EvolveOutcome", "run_evolve_agent"]
