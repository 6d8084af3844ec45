"""CLI sub-commands that run the models: ``predict`` and ``table``."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from engine.cli import _EXTENSIONS, add_input_options, command, emit, inputs_from_args
from engine.errors import LaunchError, WarplineError
from engine.inputs import KernelInputs, analyse_launch

MODEL_CHOICES = ("manybsp", "pipeline", "all")


def _require_launch(inputs: KernelInputs) -> None:
    if inputs.launch is None:
        raise LaunchError("this command needs a launch: give --grid and --block (or --launch FILE)")
    if inputs.profile is None:
        raise WarplineError("this command needs a GPU profile: give --profile NAME (see profiles/)")


def manybsp_result(inputs: KernelInputs, prepared: tuple | None = None):
    """Many-BSP for the inputs; ``prepared`` = ``analyse_launch(inputs)`` when the caller has it."""
    from engine.manybsp import predict_manybsp

    _require_launch(inputs)
    if inputs.profile.manybsp is None:
        raise WarplineError(f"profile {inputs.profile.name!r} has no [manybsp] section: "
                            "the Many-BSP model needs its parameters (mem_lat, mu, launch overheads)")
    analysis, memory = prepared if prepared is not None else (None, True)
    return predict_manybsp(inputs.module, inputs.kernel_name, inputs.profile, inputs.launch,
                           resources=inputs.resources, analysis=analysis, memory=memory)


def manybsp_payload(result) -> dict[str, Any]:
    details = {name: q.value for name, q in result.prediction.quantities.items()}
    return {
        "cycles": result.prediction.kernel_exec_cycle,
        "details": details,
        "derivation": [
            {"name": q.name, "value": q.value, "exact": q.exact, "equation": q.equation, "formula": q.formula}
            for q in result.prediction.quantities.values()
        ],
        "level1_supersteps": len(result.level1),
        "level2_supersteps": len(result.level2),
        "warnings": list(result.warnings),
    }


def pipeline_payloads(inputs: KernelInputs, ns: argparse.Namespace,
                      prepared: tuple | None = None) -> dict[str, dict[str, Any]]:
    from engine.pipeline import predict_all

    _require_launch(inputs)
    analysis, memory = prepared if prepared is not None else (None, True)
    predictions = predict_all(inputs.module, inputs.kernel_name, inputs.profile, inputs.launch,
                              occupancy=ns.occupancy, policy=ns.policy, analysis=analysis, memory=memory)
    return {name: {"cycles": p.cycles, "warps_per_cycle": p.warps_per_cycle, "details": dict(p.details)}
            for name, p in predictions.items()}


def _clock_us(inputs: KernelInputs, cycles: float | None) -> float | None:
    clock = inputs.profile.device.clock_mhz if inputs.profile is not None else None
    return cycles / clock if cycles is not None and clock else None


def _measured_cycles(path: str, inputs: KernelInputs) -> float:
    """Median measured cycles of this kernel and launch in an Nsight Compute CSV."""
    from engine.ncu import matching_cycles

    return matching_cycles(path, inputs.kernel_name, inputs.launch.grid, inputs.launch.block)


@command("predict")
def cmd_predict(ns: argparse.Namespace) -> int:
    inputs = inputs_from_args(ns, needs_profile=True)
    _require_launch(inputs)
    prepared = analyse_launch(inputs)   # both models start from the same analysis
    predictions: dict[str, dict[str, Any]] = {}
    if ns.model in ("manybsp", "all"):
        try:
            predictions["manybsp"] = manybsp_payload(manybsp_result(inputs, prepared))
        except WarplineError as exc:
            if ns.model == "manybsp":
                raise
            predictions["manybsp"] = {"cycles": None, "error": str(exc)}
    if ns.model in ("pipeline", "all"):
        payloads = pipeline_payloads(inputs, ns, prepared)
        if ns.model == "pipeline":
            payloads = {k: v for k, v in payloads.items() if k == "pipeline"}
        predictions.update(payloads)
    for payload in predictions.values():
        # Models predict execution; a measured kernel also pays the fixed launch cost.
        execution = payload.get("cycles")
        if execution is not None:
            payload["execution_cycles"] = execution
            payload["cycles"] = inputs.profile.kernel_cycles(execution)
        payload["time_us"] = _clock_us(inputs, payload.get("cycles"))
    launch = inputs.launch
    measured = _measured_cycles(ns.import_ncu, inputs) if ns.import_ncu else None
    if measured is not None:
        for payload in predictions.values():
            cycles = payload.get("cycles")
            payload["error_percent"] = None if cycles is None else 100.0 * (cycles - measured) / measured
    out = {
        "file": str(inputs.path),
        "kernel": inputs.kernel_name,
        "profile": inputs.profile.name,
        "launch": {"grid": list(launch.grid), "block": list(launch.block), "smem_dynamic": launch.smem_dynamic},
        "kernel_launch_cycles": inputs.profile.device.kernel_launch_cycles,
        "predictions": predictions,
    }
    if measured is not None:
        out["measured_cycles"] = measured
    lines = [f"{inputs.kernel_name} on {inputs.profile.name}: grid {launch.grid} block {launch.block}"]
    if measured is not None:
        lines.append(f"  measured       {measured:>14,.0f} cycles  (Nsight Compute, {ns.import_ncu})")
    for name, payload in predictions.items():
        cycles = payload.get("cycles")
        if cycles is None:
            lines.append(f"  {name:<14} —  {payload.get('error', 'no prediction')}")
            continue
        time = payload.get("time_us")
        error = payload.get("error_percent")
        lines.append(f"  {name:<14} {cycles:>14,.0f} cycles" + (f"  ({time:,.1f} µs)" if time else "")
                     + (f"  error {error:+.1f} %" if error is not None else ""))
        for warning in payload.get("warnings", []):
            lines.append(f"      warning: {warning}")
    if "manybsp" in predictions and ns.derivation and "derivation" in predictions["manybsp"]:
        lines.append("  Many-BSP derivation:")
        for q in predictions["manybsp"]["derivation"]:
            lines.append(f"    {q['name']:<20} {q['value']:>14,.6g}   {q['equation']}: {q['formula']}")
    emit(ns, out, "\n".join(lines))
    return 0


@command("table")
def cmd_table(ns: argparse.Namespace) -> int:
    from engine.manybsp import export_block_table, export_instruction_table, export_supersteps

    result = manybsp_result(inputs_from_args(ns, needs_profile=True))
    if ns.what == "instructions":
        text = export_instruction_table(result.rows, ns.csv)
    elif ns.what == "block":
        text = export_block_table(result.block, ns.csv)
    else:
        text = export_supersteps(result.level1, ns.csv)
    if ns.csv:
        print(f"wrote {ns.csv}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def _register(sub: Any) -> None:
    predict = sub.add_parser("predict", help="predicted cycles of every model")
    add_input_options(predict)
    predict.add_argument("--model", choices=MODEL_CHOICES, default="all")
    predict.add_argument("--occupancy", type=int, help="resident blocks per SM (default: the calculator's)")
    predict.add_argument("--policy", choices=("lrr", "gto"), default="lrr", help="warp scheduler of the simulator")
    predict.add_argument("--derivation", action="store_true", help="print every Many-BSP intermediate")
    predict.add_argument("--import-ncu", metavar="CSV",
                         help="Nsight Compute CSV with gpc__cycles_elapsed.max: adds each model's error")
    table = sub.add_parser("table", help="Many-BSP tables as CSV")
    add_input_options(table)
    table.add_argument("--what", choices=("instructions", "block", "supersteps"), default="block")
    table.add_argument("--csv", help="write to this file instead of standard output")


_EXTENSIONS.append(_register)


@command("validate")
def cmd_validate(ns: argparse.Namespace) -> int:
    from pathlib import Path

    from engine.validation import DEFAULT_RUNS, format_validation, run_validation

    runs = [Path(p) for p in ns.measurements] if ns.measurements else list(DEFAULT_RUNS)
    only = (lambda key: any(part in key for part in ns.only)) if ns.only else None

    def progress(i: int, n: int, key: str) -> None:
        if not ns.json:
            print(f"\r[{i + 1}/{n}] {key:<50}", end="", file=sys.stderr, flush=True)

    result = run_validation(ns.profile or "h100", runs, only=only, progress=progress)
    if not ns.json:
        print("\r" + " " * 60 + "\r", end="", file=sys.stderr)
    payload = {
        "profile": result.profile,
        "mape_percent": {model: value for model, value in result.ranking()},
        "rows": [{"configuration": r.key, "kernel": r.kernel, "measured_cycles": r.measured,
                  "predicted_cycles": r.predicted, "errors": r.errors} for r in result.rows],
    }
    if ns.plot:
        from gui.plots import plot_validation

        plot_validation(result, ns.plot)
        print(f"wrote {ns.plot}", file=sys.stderr)
    emit(ns, payload, format_validation(result))
    return 0


def _register_validate(sub: Any) -> None:
    validate = sub.add_parser("validate", help="every model against the measured sample launches (MAPE)")
    validate.add_argument("--profile", help="GPU profile of the measurements (default h100)")
    validate.add_argument("--measurements", nargs="*", help="measurement folders (default samples/measured/h100*)")
    validate.add_argument("--only", nargs="*", help="configurations whose key contains one of these")
    validate.add_argument("--plot", help="write predicted against measured as a PNG")
    validate.add_argument("--json", action="store_true")


_EXTENSIONS.append(_register_validate)
