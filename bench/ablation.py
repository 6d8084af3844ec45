"""What each modelling mechanism contributes: suite v2 (and v1, v2x) simulator and Many-BSP* MAPE
with everything on, then with one mechanism switched off at a time, on the H100 and the H200.

    .venv/bin/python bench/ablation.py [--out bench/results/ablation.json] [--gpus h100 h200] [--v1] [--v2x] [--v3]

Prints one table per GPU (all launches, tuning part, held-out part) and writes the figures as JSON.
It runs the same code as ``validate --suite v2 --without NAME`` (minutes per line).

On a machine of many cores the lines are split into items, ``SUITE-GPU:MECHANISM:K/N`` (part K of
N of the suite's launches, by the same sha256 rule as ``validation_report.py --part``; MECHANISM
``none`` for the full model), run by as many processes as wanted, each item's rows written to
``--parts DIR``; ``--merge DIR`` then joins them into the same figures and table
(``tools/device/ablation_parallel.sh``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.fileio import write_text_atomic  # noqa: E402
from engine.mechanisms import MECHANISMS, enabled, without  # noqa: E402
from engine.validation import ValidationResult, ValidationRow, run_validation  # noqa: E402

MODEL = "pipeline"
STAR = "manybsp_star"


SPLIT_SUITES = ("v2", "v2x", "v3")      # suites with a held-out part


def measure(profile: str, suite: str, removed: str | None) -> dict[str, float | None]:
    with without([removed] if removed else []):
        result = run_validation(profile, suite=suite)
    return figures_of(result, suite)


def figures_of(result: ValidationResult, suite: str) -> dict[str, float | None]:
    """One line of the ablation: MAPE of the simulator and Many-BSP*, all / tuning / held out."""
    within = result.sass_instructions_within(10.0)
    split = suite in SPLIT_SUITES
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


def _in_part(name: str, k: int, n: int) -> bool:
    return int(hashlib.sha256(name.encode()).hexdigest(), 16) % n == k


def run_item(item: str, parts: Path) -> Path:
    """One item ``SUITE-GPU:MECHANISM:K/N``: its launches validated with MECHANISM off (``none``:
    the full model), the rows written to ``parts`` (atomically; an item already there is kept)."""
    pair, removed, part = item.split(":")
    suite, gpu = pair.split("-", 1)
    k, n = (int(x) for x in part.split("/"))
    out = parts / f"{pair}.{removed}.{k}-{n}.json"
    if out.exists():
        return out
    with without([] if removed == "none" else [removed]):
        result = run_validation(gpu, suite=suite, only=lambda name: _in_part(name, k, n))
    write_text_atomic(out, json.dumps({"suite": suite, "profile": gpu, "removed": removed, "part": [k, n],
                                       "models": result.models,
                                       "rows": [r.as_dict() for r in result.rows]}) + "\n")
    return out


def merge(parts: Path) -> dict[str, dict[str, dict[str, float | None]]]:
    """The figures of every (suite, GPU, mechanism) whose N parts are all in ``parts``."""
    groups: dict[tuple[str, str, str, int], list[dict]] = {}
    for path in sorted(parts.glob("*.json")):
        data = json.loads(path.read_text())
        groups.setdefault((data["suite"], data["profile"], data["removed"], data["part"][1]), []).append(data)
    figures: dict[str, dict[str, dict[str, float | None]]] = {}
    order = {name: k for k, name in enumerate(["none", *MECHANISMS])}
    for (suite, gpu, removed, n), datas in sorted(groups.items(), key=lambda kv: (kv[0][:2], order.get(kv[0][2], 99))):
        if len({d["part"][0] for d in datas}) != n:
            print(f"{suite}-{gpu} without {removed}: {len(datas)} of {n} parts, left out")
            continue
        rows = [ValidationRow.from_dict(r) for d in datas for r in d["rows"]]
        result = ValidationResult(gpu, rows, datas[0]["models"])
        figures.setdefault(f"{suite}-{gpu}", {})[removed] = figures_of(result, suite)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", nargs="*", default=["h100", "h200"])
    parser.add_argument("--mechanisms", nargs="*", default=[m for m in MECHANISMS if enabled(m)])
    parser.add_argument("--v1", action="store_true", help="also suite v1 (H100 only)")
    parser.add_argument("--v2x", action="store_true", help="also suite v2x, the tuning supplement (every GPU)")
    parser.add_argument("--v3", action="store_true", help="also suite v3, the application-style suite (every GPU)")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "ablation.json")
    parser.add_argument("--item", action="append", default=[], help="run only SUITE-GPU:MECHANISM:K/N (repeatable)")
    parser.add_argument("--parts", type=Path, help="where --item writes its rows")
    parser.add_argument("--merge", type=Path, help="join the items in this folder into --out and print the table")
    ns = parser.parse_args(argv)
    if ns.item:
        if ns.parts is None:
            parser.error("--item needs --parts")
        ns.parts.mkdir(parents=True, exist_ok=True)
        for item in ns.item:
            start = time.perf_counter()
            print(f"{item}: {run_item(item, ns.parts).name} [{time.perf_counter() - start:.0f} s]", flush=True)
        return 0
    if ns.merge is not None:
        merged = merge(ns.merge)
        write_text_atomic(ns.out, json.dumps(merged, indent=1) + "\n")
        print(f"wrote {ns.out}\n")
        print(markdown(merged))
        return 0
    figures: dict[str, dict[str, dict[str, float | None]]] = {}
    runs = ([(gpu, "v2") for gpu in ns.gpus] + ([("h100", "v1")] if ns.v1 else [])
            + ([(gpu, "v2x") for gpu in ns.gpus] if ns.v2x else [])
            + ([(gpu, "v3") for gpu in ns.gpus] if ns.v3 else []))
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
