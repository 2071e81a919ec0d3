"""The run ledger: one owner for a run's records. Its paths (paths.py), its phase records
(records.py), its changes, judgements and reverts as files indexed in the trace store (ledger.py,
index.py), the run lock (lock.py), and the one Scoreboard built from them (manifests/scores.py)."""
from .ledger import RunLedger
from .lock import RunBusy, holder
from .paths import RunPaths
from .records import EVALUATE, EVOLVE, PHASE_ORDER, Phase, PhaseRecord, RunRecord

__all__ = ["EVALUATE", "EVOLVE", "PHASE_ORDER", "Phase", "PhaseRecord", "RunBusy", "RunLedger",
           "RunPaths", "RunRecord", "holder"]
