"""Change manifests: the pre-registered prediction of each harness change (schema, store), how its
trial judges it (trial, probe, screen, sequential, history, design, verdict, judgement), the
scores and scoreboard read from the stored judgements, and how rejected changes are undone."""
