"""``diff``: two kernels, or two versions of one, side by side (:mod:`engine.evaluation.diff`):
instructions aligned by text with the changed rows and BLOCK cells marked, every model's kernel
cycles with the absolute and relative difference, and both timelines stacked on one axis."""

from __future__ import annotations

import argparse
import copy
import sys
from typing import Any

from engine.cli.command_registry import Command
from engine.cli.evaluating import evaluate_options
from engine.cli.options import add_input_options, add_model_options, emit, inputs_from_args
from engine.cli.render import require_renderer
from engine.evaluation.diff import diff
from engine.names import display_name


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_input_options(parser)
    add_model_options(parser)
    parser.add_argument("other", help="the second PTX file (the first, FILE, is 'before'; give FILE twice to "
                                      "compare two kernels of one file)")
    parser.add_argument("--kernel-b", help="the second file's kernel (default: --kernel)")
    parser.add_argument("--launch-b", help="the second kernel's launch file (default: --launch)")
    parser.add_argument("--config-b", help="the second kernel's named launch (default: --config)")
    parser.add_argument("--all-rows", action="store_true", help="list every aligned row, not only those that differ")
    parser.add_argument("--csv", help="write the aligned rows as CSV")
    parser.add_argument("--png", help="both timelines stacked on one cycle axis, as PNG")
    parser.add_argument("--svg", help="... as SVG")
    parser.add_argument("--pdf", help="... as PDF")
    parser.add_argument("--width", type=int, default=1600, help="picture width in pixels")
    parser.add_argument("--height", type=int, default=1000, help="picture height in pixels")


def _label(inputs: Any) -> str:
    return f"{inputs.path.name} [{display_name(inputs.kernel_name).split('(')[0]}]"


def run(ns: argparse.Namespace, renderer: Any = None) -> int:
    pictures = [p for p in (ns.png, ns.svg, ns.pdf) if p]
    if pictures:
        renderer = require_renderer(renderer, "--png/--svg/--pdf")
    before_inputs = inputs_from_args(ns)
    other = copy.copy(ns)
    other.file = ns.other
    other.kernel = ns.kernel_b or ns.kernel
    other.launch_file = ns.launch_b or ns.launch_file
    other.config = ns.config_b or ns.config
    if ns.profile is None and before_inputs.profile is not None:
        other.profile = before_inputs.profile.name    # both on the same GPU unless told otherwise
    after_inputs = inputs_from_args(other)
    trace = bool(pictures)
    before = evaluate_options(ns, before_inputs, trace=trace)
    after = evaluate_options(other, after_inputs, trace=trace)
    result = diff(before, after, _label(before_inputs), _label(after_inputs))
    if ns.csv:
        result.csv(ns.csv)
        print(f"wrote {ns.csv}", file=sys.stderr)
    for picture in pictures:
        renderer.pair_image(before, after, picture, width=ns.width, height=ns.height,
                            labels=(result.before_label, result.after_label))
        print(f"wrote {picture}", file=sys.stderr)
    emit(ns, result.as_dict(), result.text(all_rows=ns.all_rows))
    return 0


COMMAND = Command("diff", "two kernels or two versions of one: aligned instructions, changed BLOCK cells, every "
                  "model's cycles with the difference, the timelines stacked", add_arguments, run)
