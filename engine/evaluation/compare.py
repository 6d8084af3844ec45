"""A result against a pinned baseline: every model's cycles, the warp-cycle shares per stall cause
and the bottleneck verdict of both, with their differences. The window's Compare tab reads
:func:`compare`; the figures are the ones each evaluation already holds (nothing is recomputed).

:class:`BaselineFigures` is what a comparison reads of a result, as plain data: a session file
stores it with each pinned baseline, so a reopened session compares with the same figures before
(or without) recomputing the baseline."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from engine.errors import WarplineError
from engine.evaluation.registry import model as model_spec
from engine.evaluation.verdict import CAUSE_TITLES, OUTSIDE, explain


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


NO_SIMULATION = "no simulation"


@dataclass(frozen=True)
class BaselineFigures:
    """The figures a comparison shows of one result."""

    models: dict[str, float | None]    # model id -> kernel cycles (None: the model gave none)
    shares: dict[str, float]           # "issuing" and each stall cause -> share of resident warp-cycles
    verdict: str                       # the bottleneck sentence
    cycles: float | None = None        # the Pipeline simulation's SM cycles (None: no simulation)


def figures_of(result: Any) -> BaselineFigures:
    """The comparison's figures of an ``Evaluation`` (a ``BaselineFigures`` is returned as is)."""
    if isinstance(result, BaselineFigures):
        return result
    verdict = explain(result)
    shares = {c.cause: c.share for c in verdict.causes if c.cause not in OUTSIDE} if verdict is not None else {}
    sim = getattr(result, "simulation", None)
    return BaselineFigures({m: _finite(r.kernel_cycles) for m, r in result.models.items()}, shares,
                           verdict.sentence if verdict is not None else NO_SIMULATION,
                           float(sim.cycles) if sim is not None else None)


def _model_title(model_id: str) -> str:
    try:
        return model_spec(model_id).title
    except WarplineError:          # a stored baseline's model that is no longer registered
        return model_id


def compare(baseline: Any, current: Any) -> list[CompareRow]:
    """Rows for two results (``engine.evaluation.Evaluation`` or :class:`BaselineFigures`): models
    in registry order, then the stall causes (shares of resident warp-cycles), then the two
    verdicts."""
    b, c = figures_of(baseline), figures_of(current)
    rows: list[CompareRow] = []
    for model_id in list(c.models) + [m for m in b.models if m not in c.models]:
        rows.append(CompareRow("model", model_id, _model_title(model_id), b.models.get(model_id),
                               c.models.get(model_id)))
    for cause in list(c.shares) + [k for k in b.shares if k not in c.shares]:
        rows.append(CompareRow("warp-cycles", cause, CAUSE_TITLES.get(cause, cause.replace("_", " ")),
                               b.shares.get(cause), c.shares.get(cause)))
    rows.append(CompareRow("bottleneck", "verdict", "bottleneck", None, None, b.verdict, c.verdict))
    return rows
