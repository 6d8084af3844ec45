"""The trace as Chrome Trace Event Format JSON (opens in Perfetto and chrome://tracing):
:func:`export_chrome_trace`."""

from __future__ import annotations

import heapq
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from engine.pipeline.trace import STALL_CAUSES, Trace
from engine.timeline.labels import subsystem_label, subsystem_names


def _pack(x0: np.ndarray, x1: np.ndarray) -> np.ndarray:
    """Sub-track per interval (x0 sorted) so that intervals on one sub-track never overlap:
    Perfetto drops complete events that overlap without nesting on one thread."""
    track = np.zeros(len(x0), dtype=np.int64)
    free: list[tuple[float, int]] = []
    n = 0
    for i, (a, b) in enumerate(zip(x0.tolist(), x1.tolist(), strict=True)):
        if free and free[0][0] <= a:
            _, t = heapq.heappop(free)
        else:
            t, n = n, n + 1
        track[i] = t
        heapq.heappush(free, (b, t))
    return track


def _chrome_events(tr: Trace, pid: int, names: Sequence[str], subsystems: Sequence[str] | None,
                   events: list[str]) -> int:
    """Append one SM's metadata and complete events to ``events``; returns the complete events."""
    events.append(json.dumps({"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
                              "args": {"name": f"SM {pid}"}}))
    tid_count = 0

    def threads(label: str, sort_base: int, n: int) -> list[int]:
        nonlocal tid_count
        tids = []
        for t in range(n):
            tid_count += 1
            name = label if t == 0 else f"{label} #{t + 1}"
            events.append(json.dumps({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid_count,
                                      "args": {"name": name}}))
            events.append(json.dumps({"ph": "M", "name": "thread_sort_index", "pid": pid,
                                      "tid": tid_count, "args": {"sort_index": sort_base + t}}))
            tids.append(tid_count)
        return tids

    iss, st = tr.issues, tr.stalls
    text = [json.dumps(n) for n in names]
    n_complete = 0
    order = np.lexsort((iss["issue"], iss["subsystem"]))
    for s, raw in enumerate(subsystem_names(tr, subsystems, None)):
        label = subsystem_label(raw)
        sel = order[iss["subsystem"][order] == s]
        track = _pack(iss["issue"][sel], iss["complete"][sel])
        tids = threads(label, s * 1000, int(track.max()) + 1 if len(track) else 0)
        cat = json.dumps(label)
        cols = (sel.tolist(), track.tolist(), iss["warp"][sel].tolist(), iss["block"][sel].tolist(),
                iss["instr"][sel].tolist(), iss["issue"][sel].tolist(), iss["complete"][sel].tolist())
        # Pre-formatted JSON objects: json.dumps over a million dicts takes several seconds.
        events.extend(
            f'{{"ph":"X","name":{text[i]},"cat":{cat},"ts":{a!r},"dur":{c - a!r},"pid":{pid},'
            f'"tid":{tids[t]},"args":{{"warp":{w},"block":{b},"instruction":{i + 1},"row":{r}}}}}'
            for r, t, w, b, i, a, c in zip(*cols, strict=True))
        n_complete += len(sel)
    from engine.stall_links import StallLinks

    links = StallLinks(tr)
    waits, held = links.waits_for(), links.held_by()

    def link_args(r: int) -> str:
        out = ""
        if waits[r] >= 0:
            out += f',"waits_for":{int(waits[r]) + 1},"waits_for_name":{text[waits[r]]}'
        if held[r] >= 0:
            out += f',"held_by":{int(held[r]) + 1},"held_by_name":{text[held[r]]}'
        return out

    order = np.lexsort((st["start"], st["warp"]))
    warps = np.unique(st["warp"])
    groups = np.split(order, np.searchsorted(st["warp"][order], warps, "right")[:-1]) if len(warps) else []
    for w, sel in zip(warps.tolist(), groups, strict=True):
        track = _pack(st["start"][sel], st["end"][sel])
        tids = threads(f"warp {w}", 10**6 + w * 10, int(track.max()) + 1)
        cols = (sel.tolist(), track.tolist(), st["start"][sel].tolist(), st["end"][sel].tolist(),
                st["cause"][sel].tolist())
        events.extend(
            f'{{"ph":"X","name":"{STALL_CAUSES[k]}","cat":"stall","ts":{a!r},"dur":{b - a!r},'
            f'"pid":{pid},"tid":{tids[t]},"args":{{"warp":{w},"row":{r}{link_args(r)}}}}}'
            for r, t, a, b, k in zip(*cols, strict=True))
        n_complete += len(sel)
    return n_complete


def export_chrome_trace(trace: Trace | Sequence[Trace], path: str | Path, names: Sequence[str],
                        subsystems: Sequence[str] | None = None) -> int:
    """Trace Event Format JSON (opens in Perfetto / chrome://tracing); returns the "X" events.

    One pid per SM (a list of traces = one per SM, pid = its position). Threads: one per
    subsystem (instruction events [issue, complete]) and one per warp (stall events named by
    cause); a thread whose events overlap is split into numbered sub-threads ("LDST / memory #2")
    because the viewers require the events of one thread to nest. Time: **1 µs in the viewer is
    one GPU cycle** (``ts``/``dur`` hold cycles; the format has no cycle unit).
    """
    traces = [trace] if isinstance(trace, Trace) else list(trace)
    events: list[str] = []
    n_complete = sum(_chrome_events(tr, pid, names, subsystems, events) for pid, tr in enumerate(traces))
    other = json.dumps({"time_unit": "1 microsecond in the viewer = 1 GPU cycle",
                        "generator": "Warpline pipeline simulator"})
    from engine.fileio import write_text_atomic

    # atomic, and an unwritable path is a one-line WarplineError naming it
    write_text_atomic(path, '{"traceEvents":[\n' + ",\n".join(events) + f'\n],"otherData":{other}}}\n')
    return n_complete
