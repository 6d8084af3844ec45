"""From a command's options to an evaluation: the one path every model-running command takes."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from engine.errors import WarplineError
from engine.evaluation import Evaluation, Evaluator, state_for
from engine.evaluation.caveats import figure_caveats
from engine.inputs import KernelInputs
from engine.pipeline.simulator import DEFAULT_MAX_WARP_INSTRUCTIONS


def evaluate_options(ns: argparse.Namespace, inputs: KernelInputs, announce: bool = True,
                     **options: Any) -> Evaluation:
    """Evaluate the inputs with the command's --occupancy/--policy; a --trip naming no loop of the
    kernel is an error that lists the loops. ``announce``: say on stderr, before anything else,
    when the figures rest on assumed inputs or on a profile not measured on its GPU (``predict``
    says it on its own first line instead)."""
    state = state_for(inputs, occupancy=getattr(ns, "occupancy", None), policy=getattr(ns, "policy", "lrr"))
    options.setdefault("max_warp_instructions",
                       getattr(ns, "max_warp_instructions", DEFAULT_MAX_WARP_INSTRUCTIONS))
    ev = Evaluator().evaluate(inputs, state, **options)
    if ev.analysis is not None and state.launch.trip_overrides:
        loops = [loop.key for loop in ev.analysis.loop_info]
        for key in state.launch.trip_overrides:
            if key not in loops:
                raise WarplineError(f"--trip {key}: no loop with that header in {inputs.kernel_name} "
                                    f"(loops: {', '.join(loops) or 'none'})")
    caveats = figure_caveats(ev).first_line()
    if announce and caveats:
        print(f"warpline: {caveats}", file=sys.stderr)
    return ev
