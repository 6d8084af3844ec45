"""SASS lines and Nsight Compute source counters (issue 32, part 2): the listing with each line's
PTX instruction, predicted warp-cycles per line by cause, an ncu source page (SASS and CUDA views)
read and matched, the largest disagreements ranked; ``predict --source-counters``.

The source pages used here are written in ncu's CSV layout (``Kernel Name`` row, header with
``Address``/``#``, ``Source``, ``Warp Stall Sampling (All Samples)``, ``stall_*`` columns) from
the kernel's own listing, with counts chosen by the test: they exercise the reader and the
matching. A page measured on the lent GPU (``tools/device/measure_source.sh``, kept under
``samples/measured/source-*``) is read by the last test when it is there."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest

from engine.errors import TableFormatError, WarplineError
from engine.evaluation import Evaluator
from engine.evaluation.hotspots import hotspots
from engine.evaluation.source_counters import (
    CAUSES,
    compare_sass,
    compare_source,
    instruction_causes,
    predicted_sass,
    views_for,
)
from engine.inputs import resolve_inputs
from engine.ncu_source import REASON_CAUSES, VIEW_SASS, VIEW_SOURCE, parse_source_csv
from engine.sass import SassListing, sass_listing, sass_map

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
HOTSPOT = SAMPLES / "ptx" / "hotspot.sm_90.ptx"
SIGNATURE = ("calculate_temp(int, float *, float *, float *, int, int, int, int, float, float, float, float, "
             "float)")
REASONS = ("barrier", "long_sb", "short_sb", "wait", "math", "mio", "not_selected", "selected")


@pytest.fixture(scope="module")
def hotspot():
    inputs = resolve_inputs(HOTSPOT, launch_file=SAMPLES / "hotspot.launch.toml", profile="h100")
    ev = Evaluator().evaluate(inputs)
    listing = sass_listing(inputs.path, inputs.kernel_name, 90, module=inputs.module)
    smap = sass_map(inputs.path, inputs.kernel_name, 90, module=inputs.module)
    if not isinstance(listing, SassListing):
        pytest.skip(f"no ptxas here: {listing.reason}")
    return inputs, ev, listing, smap


def _page(rows: list[list[str]], sass: bool = True) -> str:
    """A source page in ncu's CSV layout."""
    out = io.StringIO()
    w = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    w.writerow(["Kernel Name", SIGNATURE])
    head = ["Address", "Source"] if sass else ["#", "Address", "Source"]
    w.writerow([*head, "Warp Stall Sampling (All Samples)", "Warp Stall Sampling (Not-issued Samples)",
                "Instructions Executed", *(f"stall_{r}" for r in REASONS),
                *(f"stall_{r} (Not Issued)" for r in REASONS)])
    w.writerows(rows)
    return "==PROF== Disconnected from process 1\n" + out.getvalue()


def _sass_rows(listing: SassListing, samples: list[float], base: int = 0x7F3A5E000000) -> list[list[str]]:
    rows = []
    for line, n in zip(listing.lines, samples, strict=True):
        reasons = [0] * len(REASONS)
        reasons[REASONS.index("long_sb" if line.base.startswith("LDG") else "wait")] = n
        rows.append([f"0x{base + line.address:x}", f"      {line.text} ", f"{n:,.0f}", "0", "1,024",
                     *(str(r) for r in reasons), *("0" for _ in REASONS)])
    return rows


def test_listing_lines_belong_to_ptx_instructions(hotspot):
    inputs, _ev, listing, smap = hotspot
    n = len(inputs.function.instructions)
    owned = [line for line in listing.lines if line.owner is not None]
    assert owned and all(0 <= line.owner < n for line in owned)
    # the map's steady-state copies are lines of the listing owned by the same instruction
    for i, positions in smap.positions.items():
        assert all(listing.lines[p].owner == i for p in positions)
    loads = [line for line in owned if line.base == "LDG"]
    assert loads and all(inputs.function.instructions[line.owner].opcode == "ld" for line in loads)
    assert [line.address for line in listing.lines[:3]] == [0, 16, 32]


def test_predicted_cycles_per_line_add_up(hotspot):
    _inputs, ev, listing, smap = hotspot
    causes = instruction_causes(ev)
    hot = hotspots(ev)
    assert np.allclose(causes.sum(axis=1), hot.issue_cycles + hot.stall_cycles)
    assert causes[:, CAUSES.index("memory_dependency")].sum() > 0
    lines = predicted_sass(ev, listing, smap.positions)
    assert sum(line.predicted_share for line in lines) == pytest.approx(1.0)
    assert sum(line.predicted for line in lines) == pytest.approx(hot.total)


def test_measured_sass_page_matches_by_offset_and_ranks(hotspot):
    _inputs, ev, listing, smap = hotspot
    predicted = predicted_sass(ev, listing, smap.positions)
    # samples proportional to the prediction, except one line measured far hotter
    samples = [round(1000 * line.predicted_share) for line in predicted if line.address is not None]
    hot_line = next(k for k, line in enumerate(listing.lines) if line.base == "LDG")
    samples[hot_line] += 400
    views = parse_source_csv(_page(_sass_rows(listing, samples)), "page.csv")
    assert [v.view for v in views] == [VIEW_SASS] and views[0].function_name == "calculate_temp"
    assert views_for(views, ev.state.kernel) == views
    result = compare_sass(ev, listing, smap.positions, views[0])
    assert result.matched_by == "offset" and result.unmatched_samples == 0
    assert result.ranked(1)[0].key == listing.lines[hot_line].position
    worst = result.ranked(1)[0]
    assert worst.measured_causes == {"memory_dependency": 1.0}
    assert sum(line.measured_share for line in result.lines) == pytest.approx(1.0)
    payload = result.as_dict(limit=5)
    assert payload["largest_disagreements"][0]["address"] == listing.lines[hot_line].address
    # another build's SASS (a few instructions more or less): matched by aligning the opcodes
    rows = _sass_rows(listing, samples)
    shifted = rows[:5] + [["0x0", " NOP", "0", "0", "0", *("0" for _ in REASONS), *("0" for _ in REASONS)]] + rows[5:]
    for k, row in enumerate(shifted):
        row[0] = f"0x{0x7F3A5E000000 + 16 * k:x}"
    aligned = compare_sass(ev, listing, smap.positions, parse_source_csv(_page(shifted))[0])
    assert aligned.matched_by == "alignment" and aligned.ranked(1)[0].key == listing.lines[hot_line].position


def test_measured_cuda_page(hotspot):
    _inputs, ev, _listing, _smap = hotspot
    hot = hotspots(ev)
    cuda = [h for h in hot.cuda_lines if h.line > 0]
    rows = []
    for k, h in enumerate(sorted(cuda, key=lambda h: h.line)):
        n = 100 if k == 0 else 10
        rows.append([str(h.line), "", f"   line {h.line} of hotspot.cu", str(n), "0", "5",
                     *("0" for _ in REASONS[:-1]), str(n), *("0" for _ in REASONS)])
    view = parse_source_csv(_page(rows, sass=False))[0]
    assert view.view == VIEW_SOURCE
    result = compare_source(ev, view)
    assert result.matched_by == "line number"
    assert {line.key for line in result.lines} >= {h.line for h in cuda}
    first = min(h.line for h in cuda)
    assert next(line for line in result.lines if line.key == first).measured_causes == {"issuing": 1.0}


def test_bad_pages_are_refused_with_where():
    with pytest.raises(TableFormatError, match="no source table"):
        parse_source_csv('"ID","Kernel Name"\n"0","k"\n', "x.csv")
    page = _page([["0x10", "FFMA R1, R2, R3, R4", "nan", "0", "1", *("0" for _ in REASONS), *("0" for _ in REASONS)]])
    with pytest.raises(TableFormatError) as caught:
        parse_source_csv(page, "x.csv")
    assert caught.value.row == 4 and caught.value.column == "Warp Stall Sampling (All Samples)"
    page = _page([["zz", "FFMA", "1", "0", "1", *("0" for _ in REASONS), *("0" for _ in REASONS)]])
    with pytest.raises(TableFormatError, match="address"):
        parse_source_csv(page, "x.csv")
    no_sampling = '"Kernel Name","k(int)"\n"Address","Source","Instructions Executed"\n"0x0","EXIT","1"\n'
    with pytest.raises(TableFormatError, match="SourceCounters"):
        parse_source_csv(no_sampling, "x.csv")
    assert set(REASON_CAUSES.values()) <= set(CAUSES)


def test_cli_predict_source_counters(hotspot, tmp_path, capsys):
    from engine.cli import main as cli_main

    inputs, ev, listing, smap = hotspot
    predicted = predicted_sass(ev, listing, smap.positions)
    samples = [round(1000 * line.predicted_share) for line in predicted if line.address is not None]
    samples[0] += 300
    page = tmp_path / "page.csv"
    page.write_text(_page(_sass_rows(listing, samples)), encoding="utf-8")
    assert cli_main(["predict", str(HOTSPOT), "--launch", str(SAMPLES / "hotspot.launch.toml"), "--profile", "h100",
                     "--model", "pipeline", "--source-counters", str(page), "--lines", "3", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    (table,) = payload["source_counters"]
    assert table["view"] == "sass" and table["matched_by"] == "offset"
    assert len(table["largest_disagreements"]) == 3
    assert table["largest_disagreements"][0]["address"] == 0
    assert cli_main(["predict", str(HOTSPOT), "--source-counters", str(tmp_path / "none.csv")]) == 2
    assert "cannot read" in capsys.readouterr().err


MEASURED = sorted((SAMPLES / "measured").glob("source-*/source_*.csv"))


@pytest.mark.skipif(not MEASURED, reason="no source page measured on the lent GPU yet (tools/device/measure_source.sh)")
@pytest.mark.parametrize("page", MEASURED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_page_measured_on_the_gpu(page, hotspot):
    _inputs, ev, listing, smap = hotspot
    views = parse_source_csv(page.read_text(encoding="utf-8-sig"), str(page))
    try:
        mine = views_for(views, ev.state.kernel)
    except WarplineError:
        pytest.skip(f"{page.name} has no table of the hotspot kernel")
    for view in mine:
        result = compare_sass(ev, listing, smap.positions, view) if view.view == VIEW_SASS else compare_source(ev, view)
        assert result.total_samples > 0
        assert result.unmatched_samples <= 0.1 * result.total_samples
        assert sum(line.measured_share or 0 for line in result.lines) == pytest.approx(
            1 - result.unmatched_samples / result.total_samples, abs=1e-6)


def test_a_measured_cuda_view_without_counts_is_refused_with_the_reason():
    """ncu 2025.3 printed the CUDA view of the H100 run with each file's text and no counts (the
    SASS of those launches carried no usable line table): refused, naming what is missing."""
    page = SAMPLES / "measured" / "source-h100" / "cuda_view_without_counts.csv"
    with pytest.raises(TableFormatError, match="no 'Warp Stall Sampling \\(All Samples\\)' column"):
        parse_source_csv(page.read_text(encoding="utf-8-sig"), str(page))
