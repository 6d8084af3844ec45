"""Every model on our hotspot, knn and mm samples with the launches and GPUs of source 000's worked
cases, next to the cycles 000 measured. Prints a Markdown table (docs/pipeline.md carries it).

    .venv/bin/python tools/report_000_cases.py

Our PTX comes from today's nvcc (sm_90 target, f32 arithmetic), not the report's, so the table
shows how far the models land, not a target.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.evaluation import evaluate  # noqa: E402
from engine.inputs import resolve_inputs  # noqa: E402

CASES = ROOT.parent / "shared" / "reference" / "manybsp" / "cases.json"
MODELS = ("manybsp", "pipeline", "roofline", "volkov", "mwp_cwp", "mwp_cwp_star", "wfg", "wfg_star",
          "gpumech_rr", "gpumech_rr_star", "gpumech_gto")


def main() -> int:
    measured = {(c["kernel"], c["gpu"]): c["worked"] for c in json.loads(CASES.read_text())["cases"]}
    print("| kernel | GPU | 000 measured | 000 predicted | " + " | ".join(MODELS) + " |")
    print("|---|---|---:|---:|" + "---:|" * len(MODELS))
    for kernel in ("hotspot", "knn", "mm"):
        for gpu in ("gtx760", "940mx", "gtx1070"):
            inputs = resolve_inputs(ROOT / "samples" / "ptx" / f"{kernel}.sm_90.ptx", profile=gpu, config="case")
            # SM cycles: 000's profiles have no measured launch cost, so kernel cycles are the same
            ev = evaluate(inputs, trace=False)
            cycles = {name: r.sm_cycles for name, r in ev.models.items()}
            worked = measured[(kernel, gpu)]
            real = worked["measured_kernel_exec_cycle"]
            cells = " | ".join(f"{cycles[m]:,.0f} ({100 * (cycles[m] - real) / real:+.0f} %)" for m in MODELS)
            print(f"| {kernel} | {gpu} | {real:,.0f} | {worked['kernel_exec_cycle']:,.0f} | {cells} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
