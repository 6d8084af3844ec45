"""Unpack one device call's tarball (suite_v2.tar.gz; suite_v3.tar.gz for suite v3) and join its
per-chunk Nsight Compute output.

    python3 tools/device/suite_v2/merge.py FILES_AT/<gpu>/suite_v2.tar.gz samples/measured/v2-h100
    python3 tools/device/suite_v2/merge.py FILES_AT/<gpu>/suite_v3.tar.gz samples/measured/v3-h100

Writes into the destination folder:
* raw/           the call's tarball unchanged, and unpacked beside it everything in it
                 except the per-chunk ncu tables (<pass>_c<k>.csv, joined below): the driver's
                 per-process launch lists, stderr logs, environment, manifest, metrics, summary;
* launch_order.csv + ncu_cycles.csv          the 'cycles' pass, chunks joined in run order, ncu IDs
                 renumbered so that row i of launch_order.csv is ncu launch i (the layout of
                 samples/measured/h100/, which engine/validation.py reads);
* launch_order_memory.csv + ncu_memory.csv   the same for the 'memory' pass;
* launch_order_plain.csv                     the plain run (CUDA-event times, driver occupancy);
* sanity.txt     per configuration: median cycles / us, repeat spread; launches outside 20 us - 5 ms.
A chunk whose ncu output does not match its launch list launch for launch (kernel, grid, block)
is left out of the joined files and named in sanity.txt. A chunk that ncu did not finish (a
timeout) keeps the launches it profiled: the first k of its list when ncu's IDs are 0..k-1.
"""

from __future__ import annotations

import csv
import io
import re
import shutil
import statistics
import sys
import tarfile
import tempfile
from collections import defaultdict
from pathlib import Path


def ncu_rows(path: Path) -> tuple[list[str], dict[int, list[list[str]]]]:
    lines = [line for line in path.read_text(errors="replace").splitlines() if line.startswith('"')]
    if not lines:
        return [], {}
    reader = csv.reader(io.StringIO("\n".join(lines)))
    header = next(reader)
    by_id: dict[int, list[list[str]]] = defaultdict(list)
    for row in reader:
        if row and row[0].isdigit():
            by_id[int(row[0])].append(row)
    return header, dict(by_id)


def read_order(path: Path) -> list[dict[str, str]]:
    if not path.exists():
        return []
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def _dims(text: str) -> str:
    return "x".join(p.strip() for p in text.strip().strip("()").split(","))


def join_pass(raw: Path, name: str, out_order: Path, out_ncu: Path, notes: list[str]) -> list[tuple[dict, dict]]:
    """Join <name>_c*.csv; returns (order row, {metric: value}) pairs."""
    header_out: list[str] | None = None
    order_out: list[dict[str, str]] = []
    ncu_out: list[list[str]] = []
    joined: list[tuple[dict, dict]] = []
    k = 0
    while (raw / f"{name}_c{k}.order.csv").exists() or (raw / f"{name}_c{k}.csv").exists():
        order = read_order(raw / f"{name}_c{k}.order.csv")
        header, by_id = ncu_rows(raw / f"{name}_c{k}.csv") if (raw / f"{name}_c{k}.csv").exists() else ([], {})
        ids = sorted(by_id)
        problem = ""
        partial = bool(order) and 0 < len(ids) < len(order) and ids == list(range(len(ids)))
        if partial:
            order = order[:len(ids)]   # the launches profiled before ncu was stopped
        if not order:
            problem = "no launch list"
        elif ids != list(range(len(order))):
            problem = f"{len(ids)} launches profiled, {len(order)} listed"
        else:
            col = {h: i for i, h in enumerate(header)}
            for row, launch_id in zip(order, ids, strict=False):
                first = by_id[launch_id][0]
                kernel_short = row["key"].split("/")[1]
                kname = first[col["Kernel Name"]]
                if not (kname.startswith(kernel_short + "(") or kname.startswith(row["kernel"])) or \
                        _dims(first[col["Grid Size"]]) != row["grid"] or _dims(first[col["Block Size"]]) != row["block"]:  # noqa: E501
                    problem = f"launch {launch_id} is {first[col['Kernel Name']][:40]} {first[col['Grid Size']]}, " \
                              f"listed as {row['key']} {row['grid']}"
                    break
        if problem:
            notes.append(f"{name} chunk {k}: LEFT OUT ({problem})")
            k += 1
            continue
        if header_out is None:
            header_out = header
        elif header != header_out:
            notes.append(f"{name} chunk {k}: header differs from chunk 0 (kept)")
        col = {h: i for i, h in enumerate(header)}
        for row, launch_id in zip(order, ids, strict=False):
            new_id = len(order_out)
            metrics = {}
            for r in by_id[launch_id]:
                ncu_out.append([str(new_id)] + r[1:])
                metrics[r[col["Metric Name"]]] = r[col["Metric Value"]]
            new_row = dict(row)
            new_row["order"] = str(new_id)
            order_out.append(new_row)
            joined.append((new_row, metrics))
        notes.append(f"{name} chunk {k}: {len(order)} launches joined" +
                     (" (PARTIAL: ncu stopped before the end of its list)" if partial else ""))
        k += 1
    if order_out and header_out:
        with open(out_order, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(order_out[0]))
            writer.writeheader()
            writer.writerows(order_out)
        with open(out_ncu, "w", newline="") as handle:
            writer = csv.writer(handle, quoting=csv.QUOTE_ALL)
            writer.writerow(header_out)
            writer.writerows(ncu_out)
    return joined


def number(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    tar_path, dest = Path(sys.argv[1]), Path(sys.argv[2])
    keep = dest / "raw"
    keep.mkdir(parents=True, exist_ok=True)
    if tar_path.resolve() != (keep / tar_path.name).resolve():
        shutil.copyfile(tar_path, keep / tar_path.name)
    tmp = tempfile.TemporaryDirectory()
    raw = Path(tmp.name)
    with tarfile.open(tar_path) as tar:
        for member in tar.getmembers():
            name = member.name.removeprefix("./")
            if member.isfile() and "/" not in name:
                data = tar.extractfile(member).read()
                (raw / name).write_bytes(data)
                if not re.fullmatch(r"(cycles|memory)_c\d+\.csv", name):
                    (keep / name).write_bytes(data)
    notes: list[str] = []
    # plain run: all plain_<n>.csv in attempt order
    plain_rows = []
    n = 1
    while (raw / f"plain_{n}.csv").exists():
        plain_rows += read_order(raw / f"plain_{n}.csv")
        n += 1
    if plain_rows:
        for i, row in enumerate(plain_rows):
            row["order"] = str(i)
        with open(dest / "launch_order_plain.csv", "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(plain_rows[0]))
            writer.writeheader()
            writer.writerows(plain_rows)
    cycles = join_pass(raw, "cycles", dest / "launch_order.csv", dest / "ncu_cycles.csv", notes)
    memory = join_pass(raw, "memory", dest / "launch_order_memory.csv", dest / "ncu_memory.csv", notes)

    per_key: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for row, metrics in cycles:
        for metric in ("gpc__cycles_elapsed.max", "gpu__time_duration.sum"):
            value = number(metrics.get(metric))
            if value is not None:
                per_key[row["key"]][metric].append(value)
    plain_us: dict[str, list[float]] = defaultdict(list)
    for row in plain_rows:
        value = number(row.get("elapsed_us"))
        if value is not None:
            plain_us[row["key"]].append(value)
    keys = list(dict.fromkeys([r["key"] for r in plain_rows] + list(per_key)))
    lines = [f"# sanity summary (tools/device/suite_v2/merge.py) of raw/{tar_path.name}", *notes,
             f"configurations: {len(keys)} in the plain run or the cycles pass; "
             f"with ncu cycles: {sum(1 for k in keys if per_key[k]['gpc__cycles_elapsed.max'])}"]
    missing = [k for k in keys if not per_key[k]["gpc__cycles_elapsed.max"]]
    if missing:
        lines.append(f"no ncu cycles: {len(missing)}: " + " ".join(missing[:40]) + (" ..." if len(missing) > 40 else ""))  # noqa: E501
    all_cycles = [statistics.median(v["gpc__cycles_elapsed.max"]) for v in per_key.values() if v["gpc__cycles_elapsed.max"]]  # noqa: E501
    if all_cycles:
        lines.append(f"median cycles per configuration: min {min(all_cycles):,.0f}, max {max(all_cycles):,.0f}")
    out_of_range, noisy = [], []
    table = ["", "key | ncu cycles (median) | ncu us (median) | repeat spread % | plain us (median)"]
    for key in keys:
        cyc = per_key[key]["gpc__cycles_elapsed.max"]
        us = [t / 1000.0 for t in per_key[key]["gpu__time_duration.sum"]]
        med_c = statistics.median(cyc) if cyc else None
        med_us = statistics.median(us) if us else None
        spread = 100.0 * (max(cyc) - min(cyc)) / med_c if cyc and med_c else None
        p_us = statistics.median(plain_us[key]) if plain_us[key] else None
        ref = med_us if med_us is not None else p_us
        if ref is not None and not 20.0 <= ref <= 5000.0:
            out_of_range.append(f"{key} ({ref:.1f} us)")
        if spread is not None and spread > 5.0:
            noisy.append(f"{key} ({spread:.1f} %)")
        table.append(f"{key} | {med_c:,.0f} | {med_us:.1f} | {spread:.1f} | "
                     f"{'-' if p_us is None else f'{p_us:.1f}'}" if med_c is not None else
                     f"{key} | - | - | - | {'-' if p_us is None else f'{p_us:.1f}'}")
    lines.append(f"outside 20 us - 5 ms: {len(out_of_range)}: " + ", ".join(out_of_range))
    lines.append(f"repeat spread above 5 %: {len(noisy)}: " + ", ".join(noisy))
    lines.append(f"memory pass: {len(memory)} launches joined")
    (dest / "sanity.txt").write_text("\n".join(lines + table) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
