"""engine.timeline (layout, labels, packing, csv_export, chrome_export): lane layout of real
simulator traces, CSV and Chrome-trace exports (no Qt)."""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from engine.pipeline.examples import example_kernel, tiled_mm_kernel
from engine.pipeline.simulator import simulate
from engine.pipeline.trace import STALL_CAUSES
from engine.stall_links import StallLinks
from engine.timeline.chrome_export import export_chrome_trace
from engine.timeline.csv_export import export_trace_csv
from engine.timeline.labels import instruction_class, subsystem_label, subsystem_names
from engine.timeline.layout import layout_trace
from engine.timeline.packing import pack_rows


@pytest.fixture(scope="module")
def small():
    d = example_kernel(occupancy_warps=4, warps_total=8)
    r = simulate(d)
    return d, r.trace, [i.name for i in d.instructions], float(r.cycles)


@pytest.fixture(scope="module")
def tiled():
    d = tiled_mm_kernel(tiles=2, blocks=12, resident_blocks=4, warps_per_block=4)
    r = simulate(d)
    return d, r.trace, [i.name for i in d.instructions], float(r.cycles)


def test_lanes_cover_every_row_once_per_view(small):
    d, trace, names, cycles = small
    layout = layout_trace(trace, names, cycles=cycles, subsystems=d.subsystems)
    kinds = [lane.kind for lane in layout.lanes]
    n_warps = len(np.unique(trace.issues["warp"]))
    assert kinds == ["issue"] + ["subsystem"] * len(d.subsystems) + ["warp"] * n_warps
    assert not layout.warp_slots and layout.cycles == cycles
    assert [ln.label for ln in layout.lanes[1:3]] == ["compute", "memory"]
    issue_lane = layout.lanes[0]
    assert sorted(issue_lane.row.tolist()) == list(range(len(trace.issues)))
    sub_rows = np.concatenate([ln.row for ln in layout.lanes if ln.kind == "subsystem"])
    assert sorted(sub_rows.tolist()) == list(range(len(trace.issues)))
    stall_rows = np.concatenate([ln.row for ln in layout.lanes if ln.kind == "warp"])
    assert sorted(stall_rows.tolist()) == list(range(len(trace.stalls)))
    for lane in layout.lanes:
        assert np.all(np.diff(lane.x0) >= 0), f"{lane.label} is not sorted by start"
        if lane.kind == "subsystem":
            rec = trace.issues[lane.row]
            assert np.all(rec["subsystem"] == lane.subsystem)
            assert np.array_equal(lane.x0, rec["issue"]) and np.array_equal(lane.x1, rec["complete"])
        elif lane.kind == "warp":
            rec = trace.stalls[lane.row]
            assert set(rec["warp"].tolist()) == set(lane.warps) and len(lane.warps) == 1
            assert np.array_equal(lane.x0, rec["start"]) and np.array_equal(lane.x1, rec["end"])
    # lanes stack without overlap, top to bottom
    tops = [ln.y for ln in layout.lanes]
    assert all(b >= a + ln.height for a, b, ln in zip(tops, tops[1:], layout.lanes, strict=False))
    assert layout.height == pytest.approx(layout.lanes[-1].y + layout.lanes[-1].height)


def test_bar_lookup_and_colour_keys(small):
    d, trace, names, cycles = small
    layout = layout_trace(trace, names, cycles=cycles, subsystems=d.subsystems)
    lane_index = next(i for i, ln in enumerate(layout.lanes) if ln.kind == "warp")
    lane = layout.lanes[lane_index]
    mid = (lane.x0[2] + lane.x1[2]) / 2
    assert layout.lane_at(lane.y + 0.5 * lane.height) == lane_index
    assert layout.bar_at(lane_index, mid) == 2           # stalls of one warp never overlap
    gap_x = lane.x1[-1] + 5.0                              # past the last bar
    if gap_x < cycles:
        assert layout.bar_at(lane_index, gap_x) is None
    assert layout.bar_at(lane_index, lane.x1[-1] + 0.5, tolerance=1.0) == len(lane) - 1
    assert np.array_equal(layout.color_keys(lane, trace, "warp"), trace.stalls["cause"][lane.row])
    sub = layout.lanes[1]
    assert np.array_equal(layout.color_keys(sub, trace, "warp"), trace.issues["warp"][sub.row] % 12)
    classes = [layout.classes[k] for k in layout.color_keys(sub, trace, "class")]
    assert set(classes) == {"C"}                           # C0, C1, C3, C4 on the compute unit
    with pytest.raises(ValueError):
        layout.color_keys(sub, trace, "rainbow")


def test_warp_slots_never_overlap(tiled):
    d, trace, names, cycles = tiled
    layout = layout_trace(trace, names, cycles=cycles, subsystems=d.subsystems, max_warp_lanes=8)
    warp_lanes = [ln for ln in layout.lanes if ln.kind == "warp"]
    assert layout.warp_slots
    assert len(warp_lanes) == d.resident_blocks * d.warps_per_block    # 16 resident warp slots
    all_warps = sorted(w for ln in warp_lanes for w in ln.warps)
    assert all_warps == sorted(np.unique(trace.issues["warp"]).tolist())
    dropped = {STALL_CAUSES.index("not_resident"), STALL_CAUSES.index("finished")}
    for lane in warp_lanes:
        causes = set(trace.stalls["cause"][lane.row].tolist())
        assert not causes & dropped
        assert np.all(lane.x0[1:] >= lane.x1[:-1]), f"{lane.label}: two warps overlap"


def test_instruction_classes_and_subsystem_names(small):
    assert instruction_class("@%p1 ld.global.f32 %f1, [%rd2];") == "ld.global"
    assert instruction_class("fma.rn.f32 %f3, %f1, %f2, %f3;") == "fma"
    assert instruction_class("bar.sync 0;") == "bar"
    assert instruction_class("fma12") == "fma"
    assert instruction_class("st.shared.b") == "st.shared"
    d, trace, names, _ = small
    assert subsystem_names(trace, None, None) == ["subsystem 0", "subsystem 1"]
    units = ["alu", "alu", "ldst", "alu", "alu", "ldst"]
    assert subsystem_names(trace, None, units) == ["alu", "ldst"]
    with pytest.raises(ValueError, match="subsystem"):
        subsystem_names(trace, ["only-one"], None)
    with pytest.raises(ValueError, match="instruction names"):
        layout_trace(trace, names[:2])


def test_csv_round_trip(small, tmp_path):
    d, trace, names, _ = small
    names = [f'{n}, "quoted"' if i == 0 else n for i, n in enumerate(names)]   # needs CSV quoting
    names[1] = "@%p1 bra $L__BB0_2;"          # a spreadsheet would read this as a formula
    path = tmp_path / "trace.csv"
    written = export_trace_csv(trace, path, names, d.subsystems)
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert written == len(rows) == len(trace.issues) + len(trace.stalls)
    issues = [r for r in rows if r["kind"] == "issue"]
    stalls = [r for r in rows if r["kind"] == "stall"]
    assert len(issues) == len(trace.issues) and len(stalls) == len(trace.stalls)
    for r in issues:
        rec = trace.issues[int(r["row"])]
        # 1-based instruction numbers, as in the BLOCK table
        assert (int(r["warp"]), int(r["block"]), int(r["instruction"])) == \
            (rec["warp"], rec["block"], rec["instr"] + 1)
        expected = names[rec["instr"]]
        assert r["name"] == ("'" + expected if expected.startswith("@") else expected)   # escaped, readable
        assert r["subsystem"] == d.subsystems[rec["subsystem"]]
        # cycles rounded to a tenth
        assert float(r["start"]) == pytest.approx(rec["issue"], abs=0.0501)
        assert float(r["end"]) == pytest.approx(rec["complete"], abs=0.05)
        assert r["cause"] == ""
    links = StallLinks(trace)
    waits, held = links.waits_for(), links.held_by()
    for r in stalls:
        k = int(r["row"])
        rec = trace.stalls[k]
        assert int(r["warp"]) == rec["warp"] and r["cause"] == STALL_CAUSES[rec["cause"]]
        assert float(r["start"]) == pytest.approx(rec["start"], abs=0.05)
        assert float(r["end"]) == pytest.approx(rec["end"], abs=0.05)
        assert r["block"] == r["subsystem"] == ""
        # the instruction the warp waits to issue and the one holding it, named as in the chart
        assert r["instruction"] == ("" if waits[k] < 0 else str(waits[k] + 1))
        assert r["held_by"] == ("" if held[k] < 0 else str(held[k] + 1))
        if waits[k] >= 0:
            expected = names[waits[k]]
            assert r["name"] == ("'" + expected if expected.startswith("@") else expected)
    assert any(r["instruction"] for r in stalls) and any(r["held_by"] for r in stalls)


def test_chrome_trace_loads_and_nests(tiled, tmp_path):
    d, trace, names, _ = tiled
    path = tmp_path / "trace.json"
    n = export_chrome_trace([trace, trace], path, names, d.subsystems)   # two SMs
    doc = json.loads(path.read_text(encoding="utf-8"))
    events = doc["traceEvents"]
    complete = [e for e in events if e["ph"] == "X"]
    assert n == len(complete) == 2 * (len(trace.issues) + len(trace.stalls))
    assert {e["pid"] for e in complete} == {0, 1}
    assert "cycle" in doc["otherData"]["time_unit"]
    names_of = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["name"] == "thread_name"}
    per_thread = defaultdict(list)
    for e in complete:
        assert (e["pid"], e["tid"]) in names_of
        per_thread[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"]))
    for key, spans in per_thread.items():     # viewers need the events of one thread to nest
        spans.sort()
        assert all(b0 <= a1 for (_, b0), (a1, _) in zip(spans, spans[1:], strict=False)), names_of[key]
    issue_events = [e for e in complete if e["pid"] == 0 and e["cat"] != "stall"]
    for e in issue_events[:200]:
        rec = trace.issues[e["args"]["row"]]
        assert e["ts"] == rec["issue"] and e["ts"] + e["dur"] == pytest.approx(rec["complete"])
        assert e["name"] == names[rec["instr"]] and e["args"]["warp"] == rec["warp"]
        assert e["args"]["instruction"] == rec["instr"] + 1


def test_real_ptx_kernel_trace(tmp_path):
    """The PTX front end's trace (tiled matrix multiply sample on the H100 profile) lays out and
    exports like the hand-built ones, with PTX text as instruction names."""
    from engine.evaluation import Evaluator
    from engine.inputs import resolve_inputs

    samples = Path(__file__).resolve().parents[1] / "samples"
    inputs = resolve_inputs(samples / "ptx" / "mm.sm_90.ptx", launch_file=samples / "mm.launch.toml",
                            config="case", profile="h100")
    ev = Evaluator().evaluate(inputs, only=["pipeline"])
    r, d = ev.simulation, ev.description
    names = [i.name for i in d.instructions]
    layout = layout_trace(r.trace, names, cycles=float(r.cycles), subsystems=d.subsystems)
    labels = [ln.label for ln in layout.lanes if ln.kind == "subsystem"]
    assert {"alu", "ldst", "barrier"} <= set(d.subsystems)
    assert labels == [subsystem_label(s) for s in d.subsystems] and "LDST / memory" in labels
    assert {"ld.shared", "fma", "ld.param"} <= set(layout.classes)
    assert any(instruction_class(n) == "bar" for n in names)          # bar.sync of the tile loop
    assert sum(len(ln) for ln in layout.lanes if ln.kind == "subsystem") == len(r.trace.issues)
    assert export_trace_csv(r.trace, tmp_path / "mm.csv", names, d.subsystems) == \
        len(r.trace.issues) + len(r.trace.stalls)


def test_pack_rows_separates_overlapping_bars(small):
    rng = np.random.default_rng(7)
    x0 = np.sort(rng.uniform(0, 1000, 1000))
    x1 = x0 + rng.uniform(0.1, 2.5, 1000)
    events = np.r_[np.c_[x0, np.ones_like(x0)], np.c_[x1, -np.ones_like(x1)]]
    events = events[np.lexsort((events[:, 1], events[:, 0]))]   # ends before starts at a tie
    assert 3 <= np.cumsum(events[:, 1]).max() <= 8               # in flight: overlap, but <= 8
    rows = pack_rows(x0, x1, 8)
    assert rows.min() == 0 and rows.max() < 8
    for r in range(8):
        a, b = x0[rows == r], x1[rows == r]
        assert np.all(a[1:] >= b[:-1]), f"row {r} holds overlapping bars"
    # isolated bars always take the first row
    assert pack_rows(np.array([0.0, 10.0, 20.0]), np.array([5.0, 15.0, 25.0]), 4).tolist() == [0, 0, 0]
    # more bars in flight than rows: they still get a row, the one that frees up first
    assert pack_rows(np.zeros(5), np.array([9.0, 8.0, 7.0, 6.0, 5.0]), 2).tolist() == [0, 1, 1, 1, 1]
    d, trace, names, cycles = small
    layout = layout_trace(trace, names, cycles=cycles, subsystems=d.subsystems)
    for lane in layout.lanes[: 1 + len(d.subsystems)]:
        assert lane.sub_row is not None and lane.sub_row.max() < lane.sub_rows
        top, height = lane.bar_band(0)
        assert top == lane.y + lane.sub_row[0] * height and height == lane.height / lane.sub_rows


def test_package_keeps_the_names_of_the_single_module():
    """engine.timeline was one module until issue 33 split it by job; scripts that import its
    names from the package keep working, and each re-export is the module's own object."""
    import importlib

    import engine.timeline as timeline

    homes = {"layout": ["layout_trace"], "activity": ["HEAT_CATEGORIES", "IDLE", "GroupActivity", "group_activity",
                                                      "group_activities"],
             "lanes": ["WARP_COLORS", "Lane", "TimelineLayout", "LaneGroup", "LayoutInput", "lane_group",
                       "register_lane_group"],
             "labels": ["subsystem_label", "subsystem_names", "instruction_class"], "packing": ["pack_rows"],
             "csv_export": ["CSV_COLUMNS", "export_trace_csv", "trace_columns"],
             "chrome_export": ["export_chrome_trace"]}
    for module, names in homes.items():
        home = importlib.import_module(f"engine.timeline.{module}")
        for name in names:
            assert getattr(timeline, name) is getattr(home, name), name
    assert sorted(timeline.__all__) == sorted(n for names in homes.values() for n in names)
