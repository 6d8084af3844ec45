"""The evaluation core: the one place where a kernel's inputs and a state become figures.

* :class:`Evaluator` / :func:`evaluate` -> :class:`Evaluation` (staged: timeline, models,
  derivation, sweep); :func:`state_for` builds the starting state of a front end;
* :mod:`engine.evaluation.registry`: every model (id, title, family, explanation, predict);
* :mod:`engine.evaluation.figures`: SM cycles, launch cost, kernel cycles, µs;
* :mod:`engine.evaluation.occupancy_sweep`: the occupancy sweep and its CSV.
"""

from engine.evaluation.core import (
    PART_DERIVATION,
    PART_MODELS,
    PART_SWEEP,
    PART_TIMELINE,
    PARTS,
    Cancelled,
    Evaluation,
    Evaluator,
    evaluate,
    pipeline_overrides,
    state_for,
)
from engine.evaluation.figures import FIGURE_HELP, FIGURE_TITLES, CycleFigures, ModelResult
from engine.evaluation.occupancy_sweep import Sweep, sweep_csv, sweep_rows
from engine.evaluation.registry import ModelSpec, model, model_ids, models, register, title, unregister

__all__ = [
    "FIGURE_HELP", "FIGURE_TITLES", "PARTS", "PART_DERIVATION", "PART_MODELS", "PART_SWEEP", "PART_TIMELINE",
    "Cancelled", "CycleFigures", "Evaluation", "Evaluator", "ModelResult", "ModelSpec", "Sweep", "evaluate",
    "model", "model_ids", "models", "pipeline_overrides", "register", "state_for", "sweep_csv", "sweep_rows",
    "title", "unregister",
]
