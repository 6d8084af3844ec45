"""Run `main.py info --json` on every launch configuration of a validation suite (samples/v2,
samples/v2x or samples/v3) and report what the app could not analyse (errors, loops without a
trip count).

    .venv/bin/python tools/device/suite_v2/check_info.py [--suite v2] [--jobs 2] [--out FILE] [--profile h100]

One `python main.py info PTX --profile P --launch LAUNCH --config NAME --kernel KERNEL --json`
per configuration (the command line the app documents, run as a separate process).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def check(job: tuple[str, str, str, str, str]) -> dict:
    suite, family, launch_name, kernel, profile = job
    cmd = [sys.executable, "main.py", "info", f"samples/{suite}/ptx/{family}.sm_90.ptx", "--profile", profile,
           "--launch", f"samples/{suite}/{family}.launch.toml", "--config", launch_name, "--kernel", kernel, "--json"]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    row = {"key": f"{family}/{launch_name}", "rc": proc.returncode, "error": "", "unknown_loops": [],
           "loops": 0, "blocks_per_sm": None, "limiter": None}
    if proc.returncode != 0:
        row["error"] = (proc.stderr.strip() or proc.stdout.strip())[-400:]
        return row
    try:
        data = json.loads(proc.stdout)
        k = data["kernels"][0]
    except (ValueError, KeyError, IndexError) as exc:
        row["error"] = f"unreadable JSON: {exc}"
        return row
    row["loops"] = len(k.get("loops", []))
    row["unknown_loops"] = [f"{lp['header']}: {lp.get('trip_reason', '')}" for lp in k.get("loops", [])
                            if lp.get("trip_count") is None]
    row["trips"] = [f"{lp['header']}={lp.get('trip_count')}({lp.get('trip_source')})" for lp in k.get("loops", [])]
    occ = k.get("occupancy") or {}
    row["blocks_per_sm"] = occ.get("blocks_per_sm")
    row["limiter"] = occ.get("limiter")
    row["registers"] = k.get("registers")
    return row


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--suite", default="v2", choices=("v2", "v2x", "v3"))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--profile", default="h100")
    parser.add_argument("--out", help="also write the report here")
    ns = parser.parse_args()
    jobs = []
    for path in sorted((ROOT / "samples" / ns.suite).glob("*.launch.toml")):
        family = path.name.removesuffix(".launch.toml")
        for launch in tomllib.loads(path.read_text())["launch"]:
            jobs.append((ns.suite, family, launch["name"], launch["kernel"], ns.profile))
    with ThreadPoolExecutor(ns.jobs) as pool:
        rows = list(pool.map(check, jobs))
    lines = [f"# main.py info --json on {len(rows)} launch configurations of samples/{ns.suite} (profile {ns.profile})"]
    failed = [r for r in rows if r["rc"] != 0 or r["error"]]
    unknown = [r for r in rows if r["unknown_loops"]]
    lines.append(f"failed: {len(failed)}; configurations with a loop of unknown trip count: {len(unknown)}")
    for r in failed:
        lines.append(f"FAIL {r['key']}: rc={r['rc']} {r['error']}")
    for r in unknown:
        lines.append(f"UNKNOWN-TRIP {r['key']}: " + " | ".join(r["unknown_loops"]))
    lines.append("")
    lines.append("# every configuration: key, registers, blocks/SM (limiter), loops with trip counts")
    for r in rows:
        if not r["error"]:
            lines.append(f"{r['key']}: regs {r.get('registers')}, {r['blocks_per_sm']} blocks/SM ({r['limiter']}), "
                         f"loops {' '.join(r.get('trips', [])) or '-'}")
    text = "\n".join(lines) + "\n"
    if ns.out:
        Path(ns.out).write_text(text)
    print(text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
