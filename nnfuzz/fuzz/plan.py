"""What a campaign's start-up decided, apart from what the user asked for (fuzz/campaign.py
CampaignConfig): the ops and their supported dtype rows (probed), the opsets the systems read, the
value search's integer width, whether models are written as ONNX, the lanes and producers, and the
oracles as started (the metamorphic oracle's probed rewrites). Frozen; recorded in campaign.jsonl's
``campaign`` line (``plan``); sent to producer processes with the config."""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Dict, Optional, Tuple

if TYPE_CHECKING:
    from nnfuzz.fuzz.produce import Produced
    from nnfuzz.oracles.base import Oracle


@dataclasses.dataclass(frozen=True)
class CampaignPlan:
    ops: Tuple[type, ...]                  # the op classes generated from
    rows: Dict[str, set]                   # op name -> its supported dtype rows (an op absent: all rows)
    export: object                         # the models' ExportSpec, with the opsets every ONNX system reads
    search: Optional[object]               # the value search's SearchConfig (its int64_bits from the systems)
    onnx: bool                             # models are written as ONNX (some side of the oracle takes ONNX)
    oracles: Tuple["Oracle", ...]          # in the order they claim a model; the last is ``oracle=``'s
    workers: int = 1                       # lanes testing at once
    producers: int = 0                     # producer processes (0: models made in the lanes' threads)
    probed: bool = False                   # the systems were probed (ops, opsets, the oracles' start-up)
    quantized: float = 0.0                 # the share of QDQ graphs (mgen.quantized, or the systems' default)
    qdq_opset: Optional[int] = None        # the newest opset QDQ graphs are written at (fuzz/qdq_opsets.py)
    qdq_blocked: bool = True               # the systems run blocked quantization (probed with the QDQ opset)

    @property
    def oracle(self) -> "Oracle":
        """The oracle ``oracle=`` (or ``cmp.with=``) names."""
        return self.oracles[-1]

    def oracle_of(self, p: "Produced") -> "Oracle":
        """The oracle that took ``p`` when it was made (models made elsewhere, e.g. migrated tests: ``oracle``)."""
        return next((o for o in self.oracles if o.name == p.oracle_name), self.oracle)

    def record(self) -> Dict:
        """campaign.jsonl's ``plan``."""
        opsets = None
        if self.onnx:
            opsets = list(self.export.opsets) if self.export.opsets else self.export.opset
        return {"ops": [c.name for c in self.ops], "probed_rows": {op: len(r) for op, r in sorted(self.rows.items())},
                "opsets": opsets, "int64_bits": getattr(self.search, "int64_bits", None), "onnx": self.onnx,
                "quantized": self.quantized, "qdq_opset": self.qdq_opset,
                "qdq_blocked": self.qdq_blocked, "workers": self.workers, "producers": self.producers, "probed": self.probed,
                "oracles": [o.record() for o in self.oracles]}

    def shipped(self) -> Tuple["CampaignPlan", list]:
        """(this plan without its op classes, their names): what is sent to producer processes, which
        select the same ops from their own registry (``with_ops``)."""
        return dataclasses.replace(self, ops=()), [c.name for c in self.ops]

    def with_ops(self, ops) -> "CampaignPlan":
        return dataclasses.replace(self, ops=tuple(ops))
