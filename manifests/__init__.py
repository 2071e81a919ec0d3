"""Change manifests: the pre-registered prediction of each harness change (schema, store), how the
next evaluation judges it (noise, attribution, scores) and how rejected changes are undone (revert)."""
