"""``sensitivity``: how much a model's kernel cycles move when each figure of the GPU (every
latency class, each memory level's latency and bandwidth, the clock) or the occupancy moves by
±X % (:mod:`engine.evaluation.sensitivity`), ranked; as text, JSON or CSV."""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from engine.cli.command_registry import Command
from engine.cli.options import add_input_options, add_model_options, emit, inputs_from_args
from engine.evaluation import state_for
from engine.evaluation.registry import model_ids
from engine.evaluation.sensitivity import DEFAULT_MODEL, MAX_STEP, sensitivity


def _percent(text: str) -> float:
    """``10`` or ``10%`` -> 0.10."""
    try:
        value = float(text.strip().removesuffix("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a percentage such as 10") from None
    if not math.isfinite(value) or not 0 < value <= 100 * MAX_STEP:
        raise argparse.ArgumentTypeError(f"{text!r}: a step above 0 and at most {100 * MAX_STEP:g} %")
    return value / 100.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_input_options(parser)
    add_model_options(parser)
    parser.add_argument("--step", type=_percent, default=0.10, metavar="PERCENT",
                        help="how far each figure moves, either way (default: 10 %%)")
    parser.add_argument("--model", choices=model_ids(), default=DEFAULT_MODEL,
                        help="the model whose kernel cycles are compared (default: %(default)s)")
    parser.add_argument("--parameter", action="append", metavar="KEY",
                        help="only this parameter (repeatable; e.g. latency:global, bandwidth:DRAM, clock, "
                             "occupancy)")
    parser.add_argument("--csv", help="also write the ranked table as CSV")


def run(ns: argparse.Namespace, renderer: Any = None) -> int:
    inputs = inputs_from_args(ns)
    state = state_for(inputs, occupancy=ns.occupancy, policy=ns.policy)

    def progress(fraction: float, what: str) -> None:
        if not ns.json and sys.stderr.isatty():
            print(f"\rsensitivity: {fraction:4.0%} {what:<40}", end="", file=sys.stderr, flush=True)

    result = sensitivity(inputs, state, step=ns.step, model=ns.model, only=ns.parameter, progress=progress)
    if not ns.json and sys.stderr.isatty():
        print("\r" + " " * 60 + "\r", end="", file=sys.stderr)
    if ns.csv:
        result.csv(ns.csv, comments=[f"file: {inputs.path}"])
        print(f"wrote {ns.csv}", file=sys.stderr)
    emit(ns, {"file": str(inputs.path), "kernel": inputs.kernel_name, **result.as_dict()}, result.text())
    return 0


COMMAND = Command("sensitivity", "what-if: each latency, bandwidth, the clock and the occupancy moved by ±X %, "
                  "ranked by the change of kernel cycles", add_arguments, run)
