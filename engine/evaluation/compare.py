"""A result against a pinned baseline: every model's cycles, the warp-cycle shares per stall cause
and the bottleneck verdict of both, with their differences. The window's Compare tab reads
:func:`compare`; the figures are the ones each evaluation already holds (nothing is recomputed)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from engine.evaluation.registry import model as model_spec
from engine.evaluation.verdict import OUTSIDE, explain


@dataclass(frozen=True)
class CompareRow:
    section: str              # "model" | "warp-cycles" | "bottleneck"
    key: str                  # model id, stall cause, or "verdict"
    title: str
    baseline: float | None    # kernel cycles, or share of resident warp-cycles (0..1); None: no figure
    current: float | None
    baseline_text: str = ""   # the bottleneck sentences
    current_text: str = ""

    @property
    def difference(self) -> float | None:
        if self.baseline is None or self.current is None:
            return None
        return self.current - self.baseline

    @property
    def relative(self) -> float | None:
        """current / baseline − 1 (None without both figures or with a zero baseline)."""
        if self.baseline is None or self.current is None or self.baseline == 0:
            return None
        return self.current / self.baseline - 1.0


def _finite(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


def compare(baseline: Any, current: Any) -> list[CompareRow]:
    """Rows for two evaluations (``engine.evaluation.Evaluation``): models in registry order, then
    the stall causes (shares of resident warp-cycles), then the two verdicts."""
    rows: list[CompareRow] = []
    ids = list(current.models) + [m for m in baseline.models if m not in current.models]
    for model_id in ids:
        b, c = baseline.models.get(model_id), current.models.get(model_id)
        rows.append(CompareRow("model", model_id, model_spec(model_id).title,
                               _finite(b.kernel_cycles) if b is not None else None,
                               _finite(c.kernel_cycles) if c is not None else None))
    vb, vc = explain(baseline), explain(current)
    shares_b = {x.cause: x for x in vb.causes} if vb is not None else {}
    shares_c = {x.cause: x for x in vc.causes} if vc is not None else {}
    for cause in list(shares_c) + [k for k in shares_b if k not in shares_c]:
        if cause in OUTSIDE:
            continue
        ref = shares_c.get(cause) or shares_b[cause]
        rows.append(CompareRow("warp-cycles", cause, ref.title,
                               shares_b[cause].share if cause in shares_b else None,
                               shares_c[cause].share if cause in shares_c else None))
    rows.append(CompareRow("bottleneck", "verdict", "bottleneck", None, None,
                           vb.sentence if vb is not None else "no simulation",
                           vc.sentence if vc is not None else "no simulation"))
    return rows
