"""Run the validation suite v2 on the device machine: a plain run, then Nsight Compute passes.

    python3 tools/device/suite_v2/run_suite.py --driver BIN --manifest M --work DIR --deadline EPOCH

Called by measure.sh (which builds BIN and writes M). Standard library only. Steps:

1. Plain run of every family (3 repeats, CUDA-event timings): one driver process for all
   families; if it fails, the failing family is recorded and a new process carries on with the
   families after it. Only families that ran cleanly are profiled.
2. Metric probe: each ncu metric list is tried on one launch; metrics ncu rejects are dropped
   (by name where its error names them, else by bisection) and written down.
3. ncu passes, each split into chunks of whole families (one ncu process per chunk, so a
   timeout loses one chunk only): 'cycles' (launch metrics and cycles, --repeat 3) for every
   chunk first, then 'memory' (instructions, DRAM, caches, l1tex requests, --repeat 1). Each
   process has a timeout: twice its share of the time left (by launches and repeats, at least
   60 s), never past the deadline, so that one hanging chunk leaves time for the others.

Everything goes into --work: plain_<n>.csv / .err, probe_*.txt, <pass>_c<k>.csv (ncu stdout),
<pass>_c<k>.err (ncu + driver stderr), <pass>_c<k>.order.csv (the driver's launch list for that
process), metrics.txt, and summary.txt (printed at the end).
"""

from __future__ import annotations

import argparse
import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

CYCLES = [
    "gpc__cycles_elapsed.max", "sm__cycles_elapsed.max", "gpu__time_duration.sum",
    "launch__grid_dim_x", "launch__grid_dim_y", "launch__grid_dim_z",
    "launch__block_dim_x", "launch__block_dim_y", "launch__block_dim_z",
    "launch__grid_size", "launch__block_size", "launch__registers_per_thread",
    "launch__shared_mem_per_block_static", "launch__shared_mem_per_block_dynamic",
    "launch__occupancy_limit_blocks", "launch__occupancy_limit_registers",
    "launch__occupancy_limit_shared_mem", "launch__occupancy_limit_warps",
    "launch__waves_per_multiprocessor",
]
MEMORY = [
    "gpc__cycles_elapsed.max", "smsp__inst_executed.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
    "lts__t_sector_hit_rate.pct", "l1tex__t_sector_hit_rate.pct",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum",
    "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum",
]

LOG: list[str] = []


def say(text: str) -> None:
    stamp = time.strftime("%H:%M:%S")
    line = f"[{stamp}] {text}"
    print(line, flush=True)
    LOG.append(line)


def run(cmd: list[str], stdout: Path, stderr: Path, timeout: float) -> tuple[int, float]:
    """Run cmd with its output in files; (return code or 124 on timeout, seconds)."""
    start = time.time()
    with open(stdout, "w") as out, open(stderr, "w") as err:
        # A session of its own, so that a timeout also ends ncu's target process.
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, start_new_session=True)
        try:
            rc = proc.wait(timeout=max(1.0, timeout))
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
            rc = 124
    return rc, time.time() - start


def manifest_families(path: Path) -> list[tuple[str, int]]:
    """(family, number of launches) in manifest order."""
    out: list[tuple[str, int]] = []
    for line in path.read_text().splitlines():
        if line.startswith("family "):
            out.append((line.split()[1], 0))
        elif line.startswith("launch "):
            name, count = out[-1]
            out[-1] = (name, count + 1)
    return out


def families_ok(stderr: Path) -> tuple[list[str], list[str]]:
    ok, fails = [], []
    for line in stderr.read_text(errors="replace").splitlines():
        if line.startswith("FAMILY_OK "):
            ok.append(line.split()[1])
        elif line.startswith("FAIL "):
            fails.append(line)
    return ok, fails


def csv_launch_ids(path: Path) -> set[int]:
    ids: set[int] = set()
    if not path.exists():
        return ids
    lines = [line for line in path.read_text(errors="replace").splitlines() if line.startswith('"')]
    for row in csv.reader(lines):
        if row and row[0].isdigit():
            ids.add(int(row[0]))
    return ids


def order_rows(path: Path) -> int:
    if not path.exists():
        return 0
    with open(path, newline="") as handle:
        return sum(1 for _ in csv.DictReader(handle))


def chunks_of(families: list[tuple[str, int]], count: int) -> list[list[str]]:
    """Contiguous groups of whole families with about the same number of launches."""
    total = sum(n for _, n in families)
    groups: list[list[str]] = [[]]
    acc = 0
    for name, n in families:
        if groups[-1] and acc >= total * len(groups) / count and len(groups) < count:
            groups.append([])
        groups[-1].append(name)
        acc += n
    return [g for g in groups if g]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--driver", required=True)
    parser.add_argument("--manifest", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--deadline", type=float, required=True, help="epoch seconds by which to stop")
    parser.add_argument("--ncu", default="ncu")
    parser.add_argument("--chunks", type=int, default=3)
    parser.add_argument("--repeat-cycles", type=int, default=3)
    parser.add_argument("--repeat-plain", type=int, default=3)
    parser.add_argument("--driver-extra", default="", help="extra driver arguments (tests: --dry-run)")
    parser.add_argument("--families", nargs="*", help="subset of families")
    ns = parser.parse_args()

    work = Path(ns.work)
    work.mkdir(parents=True, exist_ok=True)
    manifest = Path(ns.manifest)
    extra = ns.driver_extra.split()
    fams = manifest_families(manifest)
    if ns.families:
        fams = [f for f in fams if f[0] in ns.families]
    launches = dict(fams)
    say(f"{len(fams)} families, {sum(launches.values())} launch configurations; "
        f"{ns.deadline - time.time():.0f} s until the deadline")

    def base(families: list[str], repeat: int, order_csv: Path) -> list[str]:
        return [ns.driver, "--manifest", str(manifest), "--families", ",".join(families),
                "--repeat", str(repeat), "--list", str(order_csv)] + extra

    # 1. plain run ------------------------------------------------------------------------
    remaining = [f for f, _ in fams]
    good: list[str] = []
    failed: dict[str, str] = {}
    attempt = 0
    while remaining:
        attempt += 1
        stem = work / f"plain_{attempt}"
        left = ns.deadline - time.time()
        rc, secs = run(base(remaining, ns.repeat_plain, stem.with_suffix(".csv")), stem.with_suffix(".out"),
                       stem.with_suffix(".err"), min(240.0, left - 60))
        ok, fails = families_ok(stem.with_suffix(".err"))
        say(f"plain run {attempt}: rc={rc}, {secs:.1f} s, {len(ok)} of {len(remaining)} families ok")
        good += [f for f in remaining if f in ok]
        rest = [f for f in remaining if f not in ok]
        if not rest:
            break
        if rc == 0:
            for f in rest:
                failed[f] = "driver exited 0 without reporting the family"
            break
        bad = rest[0]
        failed[bad] = "; ".join(fails) if fails else ("timeout" if rc == 124 else f"rc={rc}")
        say(f"  family {bad} failed: {failed[bad]}")
        remaining = rest[1:]
        if ns.deadline - time.time() < 120:
            say("  no time left for more plain runs")
            for f in remaining:
                failed[f] = "not run (time)"
            break
    good = [f for f, _ in fams if f in good]

    # 2. metric probe ------------------------------------------------------------------------
    if not good:
        say("no family ran cleanly: nothing to profile")
        write_summary(work, fams, good, failed, {}, [])
        return 1
    probe_family = good[0]
    probes = 0

    def probe(metrics: list[str]) -> tuple[bool, str]:
        nonlocal probes
        probes += 1
        stem = work / f"probe_{probes}"
        cmd = [ns.ncu, "--clock-control", "none", "--csv", "--metrics", ",".join(metrics)] + \
            base([probe_family], 1, stem.with_suffix(".order.csv")) + ["--max-launches", "1"]
        rc, secs = run(cmd, stem.with_suffix(".csv"), stem.with_suffix(".err"), min(90.0, ns.deadline - time.time() - 30))  # noqa: E501
        text = stem.with_suffix(".csv").read_text(errors="replace") + stem.with_suffix(".err").read_text(errors="replace")  # noqa: E501
        errors = [line for line in text.splitlines() if line.startswith("==ERROR==")]
        ok = rc == 0 and not errors and bool(csv_launch_ids(stem.with_suffix(".csv")))
        return ok, "\n".join(errors) + f"\n(rc={rc}, {secs:.1f} s)"

    def usable(metrics: list[str], depth: int = 0) -> list[str]:
        if probes >= 14:
            say(f"  too many probes: dropping {metrics} untested")
            return []
        ok, errors = probe(metrics)
        if ok:
            return metrics
        named = [m for m in metrics if m in errors]
        if named and depth < 3:
            say(f"  ncu rejected {named}")
            return usable([m for m in metrics if m not in named], depth + 1)
        if len(metrics) == 1:
            say(f"  dropping {metrics[0]}: {errors.strip()[:200]}")
            return []
        half = len(metrics) // 2
        return usable(metrics[:half], depth + 1) + usable(metrics[half:], depth + 1)

    passes = []
    ok, errors = probe([CYCLES[0]])
    if not ok:
        say(f"ncu cannot measure even {CYCLES[0]}: {errors.strip()[:400]}")
        write_summary(work, fams, good, failed, {}, [])
        return 1
    with open(work / "metrics.txt", "w") as handle:
        for name, metrics, repeat in (("cycles", CYCLES, ns.repeat_cycles), ("memory", MEMORY, 1)):
            kept = usable(metrics)
            dropped = [m for m in metrics if m not in kept]
            say(f"pass {name}: {len(kept)} metrics usable" + (f", dropped {dropped}" if dropped else ""))
            handle.write(f"{name} repeat={repeat} metrics={','.join(kept)}\n")
            if dropped:
                handle.write(f"{name} dropped={','.join(dropped)}\n")
            if kept:
                passes.append((name, kept, repeat))

    # 3. ncu passes ------------------------------------------------------------------------
    groups = chunks_of([(f, launches[f]) for f in good], ns.chunks)
    say(f"chunks: {[len(g) for g in groups]} families")
    results = []

    def weight(name: str, group: list[str], repeat: int) -> float:
        # ncu's cost of a chunk: per launch its repeats ('memory' replays each launch for its
        # metric groups: about 4 repeats' worth), plus each family's setup
        per_launch = repeat if name == "cycles" else 4
        return sum(launches[f] for f in group) * per_launch + 3 * len(group)

    pending = [weight(name, group, repeat) for name, _, repeat in passes for group in groups]
    for name, metrics, repeat in passes:
        for k, group in enumerate(groups):
            stem = work / f"{name}_c{k}"
            left = ns.deadline - time.time() - 10
            expected = sum(launches[f] for f in group) * repeat
            share = pending[0] / max(1.0, sum(pending))
            pending.pop(0)
            limit = min(left, max(60.0, 2.0 * share * left))
            if left < 20:
                say(f"{name} chunk {k}: skipped (no time left)")
                results.append((name, k, group, "skipped", 0, expected, 0.0))
                continue
            cmd = [ns.ncu, "--clock-control", "none", "--csv", "--metrics", ",".join(metrics)] + \
                base(group, repeat, stem.with_suffix(".order.csv"))
            (work / "commands.txt").open("a").write(" ".join(cmd) + "\n")
            rc, secs = run(cmd, stem.with_suffix(".csv"), stem.with_suffix(".err"), limit)
            got = len(csv_launch_ids(stem.with_suffix(".csv")))
            listed = order_rows(stem.with_suffix(".order.csv"))
            status = "ok" if rc == 0 and got == listed == expected else (
                f"timeout after {limit:.0f} s" if rc == 124 else f"rc={rc}")
            say(f"{name} chunk {k} ({len(group)} families): {status}, {got} profiled / {listed} listed / "
                f"{expected} expected, {secs:.1f} s")
            results.append((name, k, group, status, got, expected, secs))
    write_summary(work, fams, good, failed, dict(launches), results)
    return 0


def write_summary(work: Path, fams, good, failed, launches, results) -> None:
    lines = ["# validation suite run summary (run_suite.py)", *LOG, "",
             f"families: {len(fams)}, ran cleanly: {len(good)}, failed: {len(failed)}"]
    for fam, why in failed.items():
        lines.append(f"FAILED {fam}: {why}")
    for name, k, group, status, got, expected, secs in results:
        lines.append(f"{name} chunk {k}: {status} {got}/{expected} in {secs:.1f} s: {' '.join(group)}")
    (work / "summary.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines[len(LOG) + 2:]), flush=True)


if __name__ == "__main__":
    sys.exit(main())
