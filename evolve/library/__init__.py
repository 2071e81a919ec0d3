"""The improvement library: kept changes as plain files in a git repository (entry.py: what an
entry holds; store.py: the directory; filing.py: `library add RUN`; cue.py: which entries match a
run's failures, for the evolve agent)."""
