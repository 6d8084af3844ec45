"""Block overlap on an SM, measured against Many-BSP*'s μ*.

``samples/measured/overlap-h100/`` holds Nsight Compute cycles of every one-dimensional sample launch
run with 1, 2, 4, ... blocks per SM (one wave or less; ``tools/device/measure_packed_half_and_block_overlap.sh``). With
``T(k)`` the SM cycles of k blocks per SM (measured kernel cycles minus the profile's fixed launch
cost), the measured block-overlap factor is

    μ(k) = k × T(1) / T(k)

(k blocks' time alone over the time they take together: k when they overlap perfectly, 1 when they
run one after the other). Many-BSP*'s own figure for the same launch is μ* = blocks per SM ×
block alone / SM time (its derivation's ``mu_star``). The script prints both per launch and k, the
kernel-cycle error of Many-BSP* and of the simulator on these launches, and the mean |μ* − μ| / μ.

Run: ``.venv/bin/python bench/manybsp_overlap.py [--profile h100] [--json]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.evaluation import Evaluator, state_for  # noqa: E402
from engine.inputs import resolve_inputs  # noqa: E402
from engine.validation import load_measurements  # noqa: E402

RUN = ROOT / "samples" / "measured" / "overlap-h100"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="h100")
    parser.add_argument("--json", action="store_true")
    ns = parser.parse_args()
    measured = load_measurements([RUN])
    evaluator = Evaluator()
    rows = []
    by_launch: dict[str, dict[int, float]] = {}
    for key, m in measured.items():
        base, _, k = key.partition("@per_sm=")
        by_launch.setdefault(base, {})[int(k)] = m.median
    for base, cycles in sorted(by_launch.items()):
        sample, _, config = base.partition("/")
        inputs = resolve_inputs(ROOT / "samples" / "ptx" / f"{sample}.sm_90.ptx", profile=ns.profile,
                                launch_file=ROOT / "samples" / f"{sample}.launch.toml", config=config)
        launch_cost = inputs.profile.device.kernel_launch_cycles
        sms = inputs.profile.device.sm_count
        if 1 not in cycles:
            continue
        alone = cycles[1] - launch_cost
        for k, kernel_cycles in sorted(cycles.items()):
            one = replace(inputs, launch=replace(inputs.launch, grid=(sms * k, 1, 1)))
            ev = evaluator.evaluate(one, state_for(one), only=["manybsp_star", "pipeline"], trace=False)
            star = ev.models["manybsp_star"]
            derivation = {q.name: q.value for q in star.details.get("derivation", [])}
            sm_cycles = kernel_cycles - launch_cost
            rows.append({
                "launch": base, "blocks_per_sm": k, "resident_blocks": ev.resident_blocks,
                "measured_kernel_cycles": kernel_cycles,
                "mu_measured": k * alone / sm_cycles if sm_cycles > 0 else None,
                "mu_star": derivation.get("mu_star"),
                "manybsp_star_error_percent": star.error_percent(kernel_cycles),
                "pipeline_error_percent": ev.models["pipeline"].error_percent(kernel_cycles),
            })
    if ns.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(f"{'launch':<34} {'k':>3} {'resident':>8} {'μ measured':>10} {'μ*':>7} {'Many-BSP* err':>13} "
          f"{'simulator err':>13}")
    for r in rows:
        mu = f"{r['mu_measured']:.2f}" if r["mu_measured"] else "—"
        star = f"{r['mu_star']:.2f}" if r["mu_star"] is not None else "—"
        e1 = r["manybsp_star_error_percent"]
        e2 = r["pipeline_error_percent"]
        print(f"{r['launch']:<34} {r['blocks_per_sm']:>3} {r['resident_blocks']:>8} {mu:>10} {star:>7} "
              f"{(f'{e1:+.1f} %' if e1 is not None else '—'):>13} {(f'{e2:+.1f} %' if e2 is not None else '—'):>13}")
    pairs = [(r["mu_star"], r["mu_measured"]) for r in rows
             if r["mu_star"] and r["mu_measured"] and r["blocks_per_sm"] > 1]
    if pairs:
        print(f"\nμ* against measured μ (k > 1, {len(pairs)} launches): mean |μ* − μ| / μ = "
              f"{100 * statistics.mean(abs(a - b) / b for a, b in pairs):.1f} %")
    for model in ("manybsp_star", "pipeline"):
        errs = [abs(r[f"{model}_error_percent"]) for r in rows if r[f"{model}_error_percent"] is not None]
        if errs:
            print(f"{model}: MAPE {statistics.mean(errs):.1f} % over {len(errs)} launches")
    return 0


if __name__ == "__main__":
    sys.exit(main())
