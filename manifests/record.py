"""A change's whole record as every reader shows it: its pre-registered manifest entry, its
judgement and its revert. The verdict, decision and reason a reader shows are derived here, once;
storing and loading the parts is the run ledger's job (evolve/ledger)."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from .judgement import Judgement
from .revert import RevertRecord
from .schema import ChangeManifestEntry

PENDING = "pending"  # verdict and decision of a change no evaluation has judged yet
MANUAL = "manual"  # the verdict of a change reverted by hand, or reverted without a judgement


class ChangeRecord(BaseModel):
    model_config = ConfigDict(frozen=True)

    iteration: int  # the iteration whose EVOLVE phase made the change
    entry: ChangeManifestEntry
    judgement: Judgement | None = None
    revert: RevertRecord | None = None

    @property
    def id(self) -> str:
        return self.entry.id

    @property
    def verdict(self) -> str:
        if self.revert is not None and (self.revert.manual or self.judgement is None):
            return MANUAL
        return self.judgement.verdict if self.judgement else PENDING

    @property
    def decision(self) -> str:
        """revert once reverted (by its verdict, a cascade or by hand), else the verdict's."""
        if self.revert is not None:
            return "revert"
        return self.judgement.decision if self.judgement else PENDING

    @property
    def reason(self) -> str:
        """Why the decision: the revert's reason when something but the verdict reverted it."""
        revert, judgement = self.revert, self.judgement
        if revert is not None and (revert.manual or revert.cascaded_from or judgement is None):
            return revert.reason
        return judgement.reason if judgement else ""

    @property
    def placebo(self) -> bool:
        return bool(self.judgement and self.judgement.placebo)
