"""``export``: timeline PNG/CSV, the Many-BSP tables and the occupancy curves, headless."""

from __future__ import annotations

import argparse
from typing import Any

from engine.cli.cmd_sweep import add_sweep_points, sweep_points
from engine.cli.cmd_trace import add_simulation_options
from engine.cli.command_registry import Command
from engine.cli.evaluating import evaluate_options
from engine.cli.options import add_input_options, emit, inputs_from_args, positive_int
from engine.cli.render import require_renderer
from engine.errors import WarplineError

MAX_IMAGE_SIDE = 16384


def _image_side(text: str) -> int:
    value = positive_int(text)
    if value > MAX_IMAGE_SIDE:
        raise argparse.ArgumentTypeError(f"{value} pixels: at most {MAX_IMAGE_SIDE}")
    return value


def _cycle_range(text: str) -> tuple[float, float]:
    """START:END in cycles, START < END."""
    try:
        start, end = (float(x) for x in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give START:END in cycles, e.g. 0:5000") from None
    if not start < end:
        raise argparse.ArgumentTypeError(f"{text!r}: START must be below END")
    return start, end


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_input_options(parser)
    add_simulation_options(parser)
    parser.add_argument("--png", help="timeline (Gantt chart of the simulated SM) as PNG")
    parser.add_argument("--svg", help="timeline as SVG (vector drawing)")
    parser.add_argument("--pdf", help="timeline as PDF")
    parser.add_argument("--range", type=_cycle_range, metavar="START:END",
                        help="timeline pictures: only these cycles (default: the whole run)")
    parser.add_argument("--no-title", action="store_true",
                        help="pictures without the title line (kernel, GPU, launch, predicted time)")
    parser.add_argument("--width", type=_image_side, default=1600, help="pictures' width in pixels")
    parser.add_argument("--height", type=_image_side, default=900, help="pictures' height in pixels")
    parser.add_argument("--color", choices=("warp", "class", "block"), default="class")
    parser.add_argument("--time-series", action="store_true",
                        help="timeline pictures: add the time series under the chart (DRAM, L2 and L1 bytes per "
                             "cycle, active warps, the share of warps per stall cause)")
    parser.add_argument("--time-series-csv", help="the time series as CSV (one row per bucket of cycles)")
    parser.add_argument("--buckets", type=positive_int, default=400, help="time series: buckets over the run")
    parser.add_argument("--csv", help="timeline events and stalls as CSV")
    parser.add_argument("--predictions-csv", help="every model's figures as CSV")
    parser.add_argument("--block-csv", help="Many-BSP BLOCK table as CSV")
    parser.add_argument("--supersteps-csv", help="Many-BSP supersteps as CSV")
    parser.add_argument("--curves-csv", help="occupancy curves of every model as CSV")
    parser.add_argument("--curves-png", help="occupancy curves as PNG (as the window's Curves tab, with a title line)")
    parser.add_argument("--curves-svg", help="occupancy curves as SVG")
    parser.add_argument("--curves-pdf", help="occupancy curves as PDF")
    parser.add_argument("--roofline-png", help="roofline chart (work per byte at L1, L2 and DRAM against the "
                                               "profile's ceilings) as PNG")
    parser.add_argument("--roofline-svg", help="roofline chart as SVG")
    parser.add_argument("--roofline-pdf", help="roofline chart as PDF")
    parser.add_argument("--roofline-work", choices=("flop", "instruction"),
                        help="roofline work: floating-point operations or warp instructions (default: FLOP "
                             "when the kernel has any)")
    add_sweep_points(parser, prefix="curve-")


def run(ns: argparse.Namespace, renderer: Any = None) -> int:
    from engine.evaluation.exports import (
        write_block_csv,
        write_curves_csv,
        write_predictions_csv,
        write_supersteps_csv,
        write_time_series_csv,
        write_trace_csv,
    )

    pictures = [p for p in (ns.png, ns.svg, ns.pdf) if p]
    curve_pictures = [p for p in (ns.curves_png, ns.curves_svg, ns.curves_pdf) if p]
    roofline_pictures = [p for p in (ns.roofline_png, ns.roofline_svg, ns.roofline_pdf) if p]
    wanted = (*pictures, *curve_pictures, *roofline_pictures, ns.csv, ns.time_series_csv, ns.block_csv,
              ns.supersteps_csv, ns.curves_csv, ns.predictions_csv)
    if not any(wanted):
        raise WarplineError("export: give at least one of --png, --svg, --pdf, --csv, --predictions-csv, "
                            "--block-csv, --supersteps-csv, --curves-csv, --curves-png, --curves-svg, "
                            "--curves-pdf, --roofline-png, --roofline-svg, --roofline-pdf, --time-series-csv")
    if pictures or curve_pictures or roofline_pictures:
        renderer = require_renderer(renderer, "--png/--svg/--pdf" if pictures else
                                    "--curves-png/-svg/-pdf" if curve_pictures else "--roofline-png/-svg/-pdf")
    inputs = inputs_from_args(ns)
    traced = bool(pictures or ns.csv or ns.time_series_csv)
    ev = evaluate_options(ns, inputs, trace=traced, sweep=bool(ns.curves_csv or curve_pictures),
                          cycle_budget=ns.cycle_budget, **sweep_points(ns, "curve-"))
    written: list[str] = []
    if pictures or ns.csv or ns.time_series_csv:
        if ev.simulation is None or ev.simulation.trace is None:
            raise WarplineError(ev.models["pipeline"].error or "the simulation did not run")
        if ns.csv:
            write_trace_csv(ev, ns.csv, inputs.path)
            written.append(ns.csv)
        if ns.time_series_csv:
            write_time_series_csv(ev, ns.time_series_csv, inputs.path, ns.buckets)
            written.append(ns.time_series_csv)
        for picture in pictures:
            extra = {"series_buckets": ns.buckets} if ns.time_series else {}
            renderer.timeline_image(ev, picture, width=ns.width, height=ns.height, color_mode=ns.color,
                                    x_range=ns.range, title=not ns.no_title, **extra)
            written.append(picture)
    if ns.predictions_csv:
        write_predictions_csv(ev, ns.predictions_csv, inputs.path)
        written.append(ns.predictions_csv)
    if ns.block_csv or ns.supersteps_csv:
        if ev.manybsp is None:
            raise WarplineError(ev.models["manybsp"].error or "Many-BSP could not be built")
        if ns.block_csv:
            write_block_csv(ev, ns.block_csv)
            written.append(ns.block_csv)
        if ns.supersteps_csv:
            write_supersteps_csv(ev, ns.supersteps_csv)
            written.append(ns.supersteps_csv)
    if ns.curves_csv or curve_pictures:
        if ev.sweep is None:
            raise WarplineError("the occupancy sweep could not run: "
                                + ("; ".join(ev.errors.values()) or "no description"))
        if ns.curves_csv:
            write_curves_csv(ev, ns.curves_csv)
            written.append(ns.curves_csv)
        for picture in curve_pictures:
            renderer.curves_image(ev, picture, width=ns.width, height=ns.height, title=not ns.no_title)
            written.append(picture)
    for picture in roofline_pictures:
        renderer.roofline_image(ev, picture, width=ns.width, height=ns.height, title=not ns.no_title,
                                work=ns.roofline_work)
        written.append(picture)
    emit(ns, {"written": written}, "\n".join(f"wrote {p}" for p in written))
    return 0


COMMAND = Command("export", "timeline and curves pictures and CSVs, predictions, Many-BSP tables, headless",
                  add_arguments, run)
