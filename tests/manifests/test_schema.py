"""The change-manifest records themselves (the loading and storing rules are test_store's)."""
from __future__ import annotations

import pytest
from pydantic import ValidationError

from evoharness.manifests.schema import EvidenceRef


def test_evidence_may_name_a_rollout_by_its_attempt_but_nothing_else() -> None:
    # Small models cite rollouts as the evidence files list them (task + attempt); anything else
    # they invent is still refused by name.
    assert EvidenceRef(task_id="t", attempt=1).attempt == 1
    with pytest.raises(ValidationError, match="iteration"):
        EvidenceRef(task_id="t", iteration=1)
