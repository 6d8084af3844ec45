"""What each modelling mechanism contributes: suite v2 (and v1, v2x) simulator and Many-BSP* MAPE
with everything on, then with one mechanism switched off at a time, on the H100 and the H200.

    .venv/bin/python bench/ablation.py [--out bench/results/ablation.json] [--gpus h100 h200] [--v1] [--v2x]

Prints one table per GPU (all launches, tuning part, held-out part) and writes the figures as JSON.
It runs the same code as ``validate --suite v2 --without NAME`` (about a minute per line).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.fileio import write_text_atomic  # noqa: E402
from engine.mechanisms import MECHANISMS, enabled, without  # noqa: E402
from engine.validation import run_validation  # noqa: E402

MODEL = "pipeline"
STAR = "manybsp_star"


def measure(profile: str, suite: str, removed: str | None) -> dict[str, float | None]:
    with without([removed] if removed else []):
        result = run_validation(profile, suite=suite)
        within = result.sass_instructions_within(10.0)
    split = suite in ("v2", "v2x")
    return {
        "all": result.mape(MODEL),
        "tuning": result.mape(MODEL, result.part(False)) if split else None,
        "held_out": result.mape(MODEL, result.part(True)) if split else None,
        "manybsp_star": result.mape(STAR),
        "manybsp_star_tuning": result.mape(STAR, result.part(False)) if split else None,
        "manybsp_star_held_out": result.mape(STAR, result.part(True)) if split else None,
        "sass_instructions_within_10pct": within[0], "launches": within[1],
    }


def markdown(figures: dict[str, dict[str, dict[str, float | None]]]) -> str:
    """The ablation as a Markdown table: simulator MAPE per suite/GPU with each mechanism removed."""
    keys = list(figures)
    removed = list(dict.fromkeys(r for key in keys for r in figures[key]))

    def cell(key: str, r: str, model: str) -> str:
        row = figures[key].get(r)
        names = ("all", "tuning", "held_out") if model == MODEL else (STAR, f"{STAR}_tuning", f"{STAR}_held_out")
        if row is None or row.get(names[0]) is None:
            return "—"
        text = f"{row[names[0]]:.1f} %"
        if row.get(names[1]) is not None:
            text += f" ({row[names[1]]:.1f} / {row[names[2]]:.1f})"
        return text

    head = [f"simulator {k}" for k in keys] + [f"Many-BSP* {k}" for k in keys]
    lines = ["| mechanism removed | " + " | ".join(head) + " |", "|---|" + "---:|" * len(head)]
    for r in removed:
        cells = [cell(k, r, MODEL) for k in keys] + [cell(k, r, STAR) for k in keys]
        lines.append(f"| {'none (full model)' if r == 'none' else r} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", nargs="*", default=["h100", "h200"])
    parser.add_argument("--mechanisms", nargs="*", default=[m for m in MECHANISMS if enabled(m)])
    parser.add_argument("--v1", action="store_true", help="also suite v1 (H100 only)")
    parser.add_argument("--v2x", action="store_true", help="also suite v2x, the tuning supplement (every GPU)")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "ablation.json")
    ns = parser.parse_args(argv)
    figures: dict[str, dict[str, dict[str, float | None]]] = {}
    runs = ([(gpu, "v2") for gpu in ns.gpus] + ([("h100", "v1")] if ns.v1 else [])
            + ([(gpu, "v2x") for gpu in ns.gpus] if ns.v2x else []))
    for gpu, suite in runs:
        key = f"{suite}-{gpu}"
        figures[key] = {}
        print(f"\nsuite {suite} on {gpu}: simulator and Many-BSP* MAPE % (one mechanism removed at a time)")
        print(f"{'mechanism removed':<24}{'all':>8}{'tuning':>9}{'held out':>10}{'SASS ±10%':>12}"
              f"{'M-BSP* all':>12}{'tuning':>9}{'held out':>10}")
        for removed in [None, *ns.mechanisms]:
            start = time.perf_counter()
            row = measure(gpu, suite, removed)
            figures[key][removed or "none"] = row

            def pct(x: float | None) -> str:
                return f"{x:.1f}" if x is not None else "-"

            print(f"{removed or '(none: full model)':<24}{pct(row['all']):>8}{pct(row['tuning']):>9}"
                  f"{pct(row['held_out']):>10}{row['sass_instructions_within_10pct']:>7}/{row['launches']:<4}"
                  f"{pct(row['manybsp_star']):>12}{pct(row['manybsp_star_tuning']):>9}"
                  f"{pct(row['manybsp_star_held_out']):>10}  [{time.perf_counter() - start:.0f} s]", flush=True)
    write_text_atomic(ns.out, json.dumps(figures, indent=1) + "\n")
    print(f"\nwrote {ns.out}\n")
    print(markdown(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
