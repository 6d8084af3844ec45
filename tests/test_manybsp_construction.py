"""The engine's own BLOCK tables and level-2 splits against the nine printed ones (Tables X-2/X-3).

Inputs per case: ``<gpu>_<kernel>_instructions.tsv`` (Table X-1), the case's parameter block and
the printed level-1 ranges and iteration counts (the TSVs carry no loop information). The level-2
split, every BLOCK cell and every comp are the engine's own. The agreement table is printed
(``pytest -s``) and copied into docs/manybsp.md.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from engine.manybsp import (
    Level1Spec,
    ManyBspParams,
    block_table_from_reference_tsv,
    build_block_table,
    instruction_table_from_reference_tsv,
    run_manybsp,
)

REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "reference" / "manybsp"
CASES = json.loads((REFERENCE / "cases.json").read_text())["cases"] if REFERENCE.exists() else []
pytestmark = pytest.mark.skipif(not CASES, reason="shared/reference/manybsp is not available")

@dataclass
class Agreement:
    case: str                                   # "<kernel>/<gpu>"
    stem: str                                   # "<gpu>_<kernel>" (file prefix)
    printed_level2: int
    boundaries: int
    comps: int
    level1_errors: list[float]
    kernel: float
    printed_kernel: float
    cells: float
    missed: list[tuple[int, int]]               # printed level-2 ranges whose comp we do not match
    level1_ranges: list[tuple[int, int]]
    printed_ranges: list[tuple[int, int]]       # printed level-2 ranges in order

    @property
    def kernel_error(self) -> float:
        return abs(self.kernel - self.printed_kernel) / self.printed_kernel * 100


def _params(case: dict) -> ManyBspParams:
    values = dict(case["params"])
    values["mu"] = case["worked"]["mu"]
    return ManyBspParams.from_dict(values)


def _stem(case: dict) -> str:
    return f"{case['gpu']}_{case['kernel']}"


def _agreement(case: dict) -> Agreement:
    stem = _stem(case)
    rows = instruction_table_from_reference_tsv(REFERENCE / f"{stem}_instructions.tsv")
    printed_block = block_table_from_reference_tsv(REFERENCE / f"{stem}_block.tsv")
    iterations = [t for t, _ in case["as_used"]["parallel_comp_terms_iter_x_comp"]]
    specs = [Level1Spec(s["start"], s["end"], t) for s, t in zip(case["level1"], iterations, strict=True)]
    params = _params(case)
    result = run_manybsp(rows, params, specs)
    mine = {(s.start, s.end): s.comp for s in result.level2}
    printed = case["level2"]
    boundaries = sum((s["start"], s["end"]) in mine for s in printed)
    missed = [(s["start"], s["end"]) for s in printed if mine.get((s["start"], s["end"])) != s["comp"]]
    level1_errors = [abs(a.comp - p["comp"]) / p["comp"] * 100
                     for a, p in zip(result.level1, case["level1"], strict=True)]
    construction = build_block_table(rows, params, {s.end for s in specs})
    total = same = 0
    for a, b in zip(construction.block, printed_block, strict=True):
        assert a.index == b.index
        pairs = [((a.issue or 0), (b.issue or 0)), (a.sync, b.sync), (a.comm, b.comm), (a.ovh, b.ovh),
                 ({k: v.text() for k, v in a.fu.items()}, {k: v.text() for k, v in b.fu.items()})]
        total += len(pairs)
        same += sum(x == y for x, y in pairs)
    return Agreement(f"{case['kernel']}/{case['gpu']}", stem, len(printed), boundaries,
                     len(printed) - len(missed), level1_errors, result.kernel_exec_cycle,
                     case["worked"]["kernel_exec_cycle"], 100 * same / total, missed,
                     [(s["start"], s["end"]) for s in case["level1"]],
                     [(s["start"], s["end"]) for s in printed])


@pytest.fixture(scope="module")
def agreements() -> list[Agreement]:
    table = [_agreement(c) for c in CASES]
    print("\ncase            L2 printed  boundaries exact  comps exact  L1 comp max err  kernel err  cells")
    for a in table:
        print(f"{a.case:15s} {a.printed_level2:10d}  {100 * a.boundaries / a.printed_level2:15.1f}%"
              f"  {100 * a.comps / a.printed_level2:10.1f}%  {max(a.level1_errors):14.2f}%"
              f"  {a.kernel_error:9.2f}%  {a.cells:5.1f}%")
    n = sum(a.printed_level2 for a in table)
    print(f"{'all':15s} {n:10d}  {100 * sum(a.boundaries for a in table) / n:15.1f}%"
          f"  {100 * sum(a.comps for a in table) / n:10.1f}%")
    errors = [e for a in table for e in a.level1_errors]
    print(f"level-1 comps within 2 %: {sum(e <= 2 for e in errors)}/{len(errors)}; "
          f"kernel cycles within 3 %: {sum(a.kernel_error <= 3 for a in table)}/{len(table)}")
    return table


# --------------------------------------------------------------------------------------------
# Where the printed tables contradict each other (or themselves). The targets (>= 95 % of level-2
# comps exact, every level-1 comp within 2 %, every kernel within 3 %) cannot all be met by rules
# keyed on instruction properties, dependences, position and the GPU profile, because the rows
# below print different costs for inputs that are identical. Each entry names the rows, says why,
# and is checked against the data by ``test_contradictions_are_real`` (so a wrong claim fails).
# Keys: (kind, table stem, rows); the checker for each kind is below.
# --------------------------------------------------------------------------------------------

_MM760_LDST = tuple([36, 37, 41, 42, 155] + [k for k in range(44, 139) if k % 3 != 1])

CONTRADICTIONS: dict[tuple[str, str, tuple[int, ...]], str] = {
    ("wt_vs_gpu", "gtx760_mm", _MM760_LDST):
        "LDST rows print warp_size/T = 4 (FU4 32 = 8x4, 16+28 = 16+7x4) while their instruction table "
        "says T = 16, their own issue cells use 16 (8x2) and hotspot/GTX 760 and knn/GTX 760 print 2 "
        "for the same opcodes with the same T, n_fu and n_ma on the same GPU; the profile gives 16 per "
        "scheduler too (Table 1-1). The only differing input is w (8 against 2). Costs mm/GTX 760 33 "
        "level-2 comps, all three level-1 comps and the 25 % kernel error.",
    ("wt_vs_gpu", "gtx760_mm", (14, 15, 152)):
        "cvta.to.global.u64 prints FU1 32 and warp_size/T 4 with T = 32, while hotspot/GTX 760 rows 39, "
        "49, 193 and knn/GTX 760 rows 15, 16 (same text, same T) print 1.",
    ("latency_vs_table", "gtx760_mm", (100,)):
        "fma.rn.f32 prints latency 20 (the 940MX value) while the other 31 fma rows of the table print "
        "the instruction table's 41.",
    ("latency_vs_table", "940mx_knn", (26,)):
        "fma.rn.f32 prints 6+1 while the instruction table gives 20 and mm/940MX prints 20+7 for the "
        "same opcode on the same GPU (costs 14 cycles of level-1 superstep 2 and a level-2 comp).",
    ("latency_vs_table", "gtx1070_knn", (26,)):
        "as knn/940MX row 26: prints 6+1 where the instruction table and mm/GTX 1070 use 19.",
    ("plain_vs_same_gpu", "940mx_knn", (15, 16)):
        "cvta.to.global.u64 (T = 8, w = 2) prints FU1 4 while hotspot/940MX rows 39, 49, 193 (same "
        "opcode, T, w and GPU) print 8 = w x 32/T.",
    ("plain_vs_same_gpu", "gtx1070_knn", (15, 16)):
        "as knn/940MX rows 15, 16 against hotspot/GTX 1070 rows 39, 49, 193.",
    ("plain_vs_same_gpu", "940mx_mm", (152,)):
        "cvta.to.global.u64 prints FU1 8 while rows 14 and 15 of the same table (same opcode and T) "
        "print 32; eq. 9 of <151~152> = 21 and level-1 superstep 3 = 192 need the 8.",
    ("plain_vs_same_gpu", "gtx1070_mm", (152,)):
        "as mm/940MX row 152.",
    ("cell_vs_wt_column", "940mx_mm", (143, 144)):
        "warp_size/T printed 2 (T = 16) but the cell is 6+7 = 6 + (w-1)x1; rows 8, 19, 146 of the same "
        "table print 6+14 for T = 16.",
    ("cell_vs_wt_column", "gtx1070_mm", (143, 144)):
        "as mm/940MX rows 143, 144.",
    ("full_vs_other_gpu", "gtx760_hotspot", (60,)):
        "rcp.rn.f32 filler after div (59 -> 63 wait) prints its full latency 419+2 on GTX 760 but plain "
        "8 on 940MX and GTX 1070 (same split, same dependences, latencies 370/366 >> the wait): alone "
        "the 26 % level-1 error and the kernel error of hotspot/GTX 760.",
    ("full_vs_other_gpu", "gtx760_hotspot", (71, 163)):
        "full (16+1) on GTX 760, plain on 940MX and GTX 1070 with the same split.",
    ("full_vs_other_gpu", "940mx_hotspot", (171,)):
        "setp.eq.s16 after the level-1 end at 170 prints 6+2 on 940MX/GTX 1070 but plain on GTX 760 "
        "(the 3.5 % error of level-1 superstep 3).",
    ("full_vs_other_gpu", "gtx1070_hotspot", (171,)): "as hotspot/940MX row 171.",
    ("full_vs_other_gpu", "940mx_hotspot", (71,)): "the other side of hotspot/GTX 760 row 71.",
    ("full_vs_other_gpu", "gtx1070_hotspot", (71,)): "the other side of hotspot/GTX 760 row 71.",
    ("full_vs_other_gpu", "gtx760_knn", (12,)):
        "mad.lo.s32 head prints plain 2 on GTX 760 but 6+1 on 940MX/GTX 1070 with the same split "
        "(the 15 % error of level-1 superstep 1).",
    ("full_vs_other_gpu", "gtx760_mm", (145,)):
        "mov.u32 after the loop prints 32+7 on GTX 760 but plain 8 on 940MX/GTX 1070.",
    ("full_vs_same_table", "gtx760_hotspot", (143, 154, 160)):
        "DPU heads read by the fma.rn.f64 right after them: 154 prints 16+4, 143 and 160 print 8, "
        "with the same column, the same position and the same kind of split before them.",
    ("full_vs_same_gpu", "gtx760_mm", (38,)):
        "add.s32 dual-issued behind the full st.shared head of <37~38> and read by the next row prints "
        "16+7, while hotspot/GTX 760 rows 49, 156, 177 in the same position (blank issue, behind a "
        "full non-SP head, read by the next row) print plain.",
    ("full_vs_same_gpu", "940mx_mm", (38,)): "as mm/GTX 760 row 38, against hotspot/940MX.",
    ("full_vs_same_gpu", "gtx1070_mm", (38,)): "as mm/GTX 760 row 38, against hotspot/GTX 1070.",
    ("eq9_vs_cells", "940mx_hotspot", (39, 40)):
        "level-2 <39~40> printed 17, eq. 9 over the printed cells gives 12 (row 40 FU1 2, sync 7).",
    ("eq9_vs_cells", "gtx1070_hotspot", (39, 40)): "as hotspot/940MX <39~40>.",
    ("eq9_vs_cells", "gtx760_mm", (1, 2, 3, 4, 5, 6)):
        "level-2 <1~6> printed 61 (the 940MX value), eq. 9 over the printed GTX 760 cells gives 71.",
}

# Misses no rule found and no contradiction explains (kept visible so a regression is caught).
UNEXPLAINED: dict[tuple[str, int], str] = {
    ("940mx_mm", 33): "add.s32 heading the loop body (after the level-1 end at 32) prints plain, while "
                      "hotspot row 97 in the same position prints full; 97 has no producers, 33 has.",
    ("gtx1070_mm", 33): "as mm/940MX row 33.",
}


@functools.cache
def _tables(stem: str) -> tuple[dict, dict, dict]:
    case = next(c for c in CASES if _stem(c) == stem)
    rows = {r.index: r for r in instruction_table_from_reference_tsv(REFERENCE / f"{stem}_instructions.tsv")}
    block = {b.index: b for b in block_table_from_reference_tsv(REFERENCE / f"{stem}_block.tsv")}
    return case, rows, block


def _same_gpu_tables(stem: str) -> list[str]:
    gpu = stem.split("_")[0]
    return [_stem(c) for c in CASES if c["gpu"] == gpu and _stem(c) != stem]


def _other_gpu_table(stem: str, gpu: str) -> str:
    return f"{gpu}_{stem.split('_', 1)[1]}"


@functools.cache
def _printed_split(stem: str) -> dict[int, tuple[int, int]]:
    """Row -> printed level-2 range (from the printed sync column, which splits every table)."""
    from engine.manybsp import split_by_sync

    case, _, block = _tables(stem)
    ordered = list(block.values())
    ranges = split_by_sync(ordered, {s["end"] for s in case["level1"]})
    return {ordered[k].index: (ordered[a].index, ordered[b].index) for a, b in ranges for k in range(a, b + 1)}


def _check(kind: str, stem: str, rows_: tuple[int, ...]) -> None:
    """Assert that the named rows really contradict the data they are compared with."""
    case, rows, block = _tables(stem)
    w = case["w"]
    if kind == "wt_vs_gpu":
        for i in rows_:
            r, b = rows[i], block[i]
            assert b.warp_over_T != 32 / r.T, (stem, i)            # printed wT is not the table's
            if b.issue is not None and r.fu == 4:
                assert b.issue == w * 32 / r.T, (stem, i)          # ... but the issue cell uses it
            witnesses = [(o, j) for o in _same_gpu_tables(stem) for j, q in _tables(o)[1].items()
                         if q.opcode == r.opcode and q.T == r.T and q.n_fu == r.n_fu
                         and _tables(o)[2][j].warp_over_T == 32 / q.T]
            assert witnesses, (stem, i)                            # same GPU prints the table's wT
    elif kind == "latency_vs_table":
        for i in rows_:
            r, b = rows[i], block[i]
            assert b.fu[r.fu].latency not in (0, r.lat_comp), (stem, i)
            witnesses = [(o, j) for o in [stem, *_same_gpu_tables(stem)] for j, q in _tables(o)[1].items()
                         if q.opcode == r.opcode and q.lat_comp == r.lat_comp and (o, j) != (stem, i)
                         and _tables(o)[2][j].fu.get(q.fu) is not None
                         and _tables(o)[2][j].fu[q.fu].latency == q.lat_comp]
            assert witnesses, (stem, i)
    elif kind == "plain_vs_same_gpu":
        for i in rows_:
            r, b = rows[i], block[i]
            cell = b.fu[r.fu]
            assert cell.latency == 0
            witnesses = [(o, j) for o in [stem, *_same_gpu_tables(stem)] for j, q in _tables(o)[1].items()
                         if q.opcode == r.opcode and q.T == r.T and _tables(o)[0]["w"] == w and (o, j) != (stem, i)
                         and _tables(o)[2][j].fu.get(q.fu) is not None
                         and _tables(o)[2][j].fu[q.fu].latency == 0
                         and _tables(o)[2][j].fu[q.fu].value != cell.value]
            assert witnesses, (stem, i)
    elif kind == "cell_vs_wt_column":
        for i in rows_:
            r, b = rows[i], block[i]
            cell = b.fu[r.fu]
            assert cell.latency > 0 and cell.occupancy != (w - 1) * b.warp_over_T, (stem, i)
    elif kind == "full_vs_other_gpu":
        split = _printed_split(stem)
        for i in rows_:
            r, b = rows[i], block[i]
            full_here = b.fu[r.fu].latency > 0
            opposite = []
            for gpu in ("gtx760", "940mx", "gtx1070"):
                other = _other_gpu_table(stem, gpu)
                if other == stem:
                    continue
                _, orow, oblock = _tables(other)
                if (oblock[i].fu[orow[i].fu].latency > 0) != full_here and orow[i].opcode == r.opcode:
                    # The other GPU's full and plain cells differ, and the row sits in the same
                    # printed superstep, so the fullness really is printed differently.
                    plain_o, full_o = _plain_full(other, i)
                    if plain_o != full_o and _printed_split(other)[i] == split[i]:
                        opposite.append(other)
            assert opposite, (stem, i)
    elif kind == "full_vs_same_table":
        split = _printed_split(stem)
        fullness = {i: block[i].fu[rows[i].fu].latency > 0 for i in rows_}
        assert len(set(fullness.values())) == 2, fullness
        for i in rows_:
            assert split[i][0] == i                                   # each heads its superstep
            assert rows[i].fu == rows[rows_[0]].fu                    # same column
            assert i in rows[i + 1].producers                         # read by the next row
            assert block[i - 1].sync > 0 and split[i - 1][1] == i - 1 # previous superstep ended
    elif kind == "full_vs_same_gpu":
        def signature(o: str, j: int) -> bool:
            """Blank issue, SP, right behind a full non-SP head, read by the next row."""
            _, orows, oblock = _tables(o)
            prev = oblock.get(j - 1)
            return (oblock[j].issue is None and orows[j].fu == 1 and prev is not None
                    and any(c.latency > 0 for col, c in prev.fu.items() if col != 1)
                    and j + 1 in orows and j in orows[j + 1].producers)

        for i in rows_:
            assert signature(stem, i), (stem, i)
            full_here = block[i].fu[1].latency > 0
            witnesses = [(o, j) for o in _same_gpu_tables(stem) for j in _tables(o)[1]
                         if signature(o, j) and (_tables(o)[2][j].fu[1].latency > 0) != full_here
                         and len(set(_plain_full(o, j))) == 2]
            assert witnesses, (stem, i)
    elif kind == "eq9_vs_cells":
        from engine.manybsp import eq9_comp

        printed = next(s for s in case["level2"] if (s["start"], s["end"]) == (rows_[0], rows_[-1]))
        assert list(rows_) == list(range(rows_[0], rows_[-1] + 1))
        assert eq9_comp([block[i] for i in rows_]) != printed["comp"]
    else:
        raise AssertionError(kind)


def _plain_full(stem: str, i: int) -> tuple[float, float]:
    from engine.manybsp import fu_cell

    case, rows, _ = _tables(stem)
    params = _params(case)
    return fu_cell(rows[i], params, False).value, fu_cell(rows[i], params, True).value


@pytest.mark.parametrize("key", list(CONTRADICTIONS), ids=lambda k: f"{k[1]}-{k[0]}-{k[2][0]}")
def test_contradictions_are_real(key: tuple[str, str, tuple[int, ...]]) -> None:
    _check(*key)


def _explained(a: Agreement, first: int, last: int) -> bool:
    """A miss is explained when a contradictory (or listed) row lies in the printed superstep or in
    the printed superstep before it (a wrong cell there moves this superstep's start through eq. 8)."""
    rows_ = {i for (_, stem, rs) in CONTRADICTIONS if stem == a.stem for i in rs}
    rows_ |= {i for (stem, i) in UNEXPLAINED if stem == a.stem}
    k = a.printed_ranges.index((first, last))
    lo = a.printed_ranges[k - 1][0] if k > 0 and a.printed_ranges[k - 1][1] == first - 1 else first
    return any(lo <= i <= last for i in rows_)


def test_level2_boundaries(agreements: list[Agreement]) -> None:
    n = sum(a.printed_level2 for a in agreements)
    assert sum(a.boundaries for a in agreements) >= 572, n           # 99.0 % of 578
    for a in agreements:
        assert a.boundaries / a.printed_level2 >= 0.95, a.case


def test_level2_comps(agreements: list[Agreement]) -> None:
    assert sum(a.comps for a in agreements) >= 516                   # 89.3 % of 578
    for a in agreements:
        for first, last in a.missed:
            assert _explained(a, first, last), (a.case, first, last)


def test_level1_comps(agreements: list[Agreement]) -> None:
    errors = [e for a in agreements for e in a.level1_errors]
    assert sum(e <= 2.0 for e in errors) >= 16, errors
    for a in agreements:
        for (first, last), e in zip(a.level1_ranges, a.level1_errors, strict=True):
            if e > 2.0:
                assert any(_explained(a, f, l) for f, l in a.missed if first <= f <= last), (a.case, first)


def test_kernel_cycles(agreements: list[Agreement]) -> None:
    assert sum(a.kernel_error <= 3.0 for a in agreements) >= 6
    for a in agreements:
        if a.kernel_error > 3.0:
            # Only cases whose level-1 error comes from a named contradiction miss the 3 % target.
            assert any(e > 2.0 for e in a.level1_errors), a.case
            assert any(stem == a.stem for (_, stem, _) in CONTRADICTIONS), a.case


def test_cells(agreements: list[Agreement]) -> None:
    for a in agreements:
        assert a.cells >= (85.0 if a.case == "mm/gtx760" else 96.0), a.case


def test_mm760_ldst_contradiction_names_every_ldst_row() -> None:
    """The mm/GTX 760 LDST entry claims *every* LD/ST row; check the row list is exactly those."""
    _, rows, _ = _tables("gtx760_mm")
    assert set(_MM760_LDST) == {i for i, r in rows.items() if r.fu == 4}


def test_constructed_sync_is_what_splits() -> None:
    """The split the construction finds is exactly the one its sync column implies, so an exported
    and re-imported BLOCK table splits the same way."""
    from engine.manybsp import split_by_sync

    for case in CASES:
        stem = f"{case['gpu']}_{case['kernel']}"
        rows = instruction_table_from_reference_tsv(REFERENCE / f"{stem}_instructions.tsv")
        ends = {s["end"] for s in case["level1"]}
        built = build_block_table(rows, _params(case), ends)
        assert split_by_sync(built.block, ends) == built.level2, stem


def test_known_rules_on_hotspot_gtx760() -> None:
    """Spot checks of single rules on rows the docs cite."""
    rows = instruction_table_from_reference_tsv(REFERENCE / "gtx760_hotspot_instructions.tsv")
    case = next(c for c in CASES if (c["kernel"], c["gpu"]) == ("hotspot", "gtx760"))
    built = build_block_table(rows, _params(case), {s["end"] for s in case["level1"]})
    by = {b.index: b for b in built.block}
    assert by[1].fu[1].text() == "16+1" and by[2].fu[1].text() == "2"     # first row full, then plain
    assert by[43].issue is None and by[63].issue is None                   # dual issue after LDST/SFU
    assert by[42].comm == 764 and not by[42].fu                            # global: comm only
    assert by[56].ovh == 173 and by[56].sync == 1                          # barrier
    assert by[59].sync == 129                                              # eq. 8 with rows between
    assert by[48].fu[4].text() == "41+2"
    # After a conditional branch: a head is full only when a consumer waits on it across rows.
    assert by[38].fu[1].text() == "16+1" and by[38].sync == 15                 # 37 bra.uni, 40 waits
    assert by[106].fu[1].text() == "2" and by[124].fu[1].text() == "2"       # nobody waits across
    # A conditional branch waiting for its superstep's head ends the superstep, no split at the head.
    positions = {(built.block[a].index, built.block[b].index) for a, b in built.level2}
    assert (102, 104) in positions and by[102].sync == 0 and by[104].sync == 1


def test_branch_behind_a_synchronised_predicate_does_not_end() -> None:
    """mm: 11 (setp) ends <10~11> through eq. 8 with 12 as filler; the branch at 13 then has
    nothing to wait for and stays inside <12~18>, as printed on 940MX and GTX 1070."""
    for gpu in ("940mx", "gtx1070"):
        case = next(c for c in CASES if (c["kernel"], c["gpu"]) == ("mm", gpu))
        rows = instruction_table_from_reference_tsv(REFERENCE / f"{gpu}_mm_instructions.tsv")
        built = build_block_table(rows, _params(case), {s["end"] for s in case["level1"]})
        positions = {(built.block[a].index, built.block[b].index) for a, b in built.level2}
        assert {(10, 11), (12, 18)} <= positions
        assert built.block[12].sync == 0                                      # row 13 (0-based 12)


def _random_rows(seed: int, n: int = 300) -> list:
    import random

    from engine.manybsp import InstructionRow

    rng = random.Random(seed)
    rows = []
    for i in range(1, n + 1):
        if rng.random() < 0.03:
            rows.append(InstructionRow(i, "bar.sync 0;", "bar.sync", None, 0, 0, 0, 120, 0, True, False,
                                       0, 0, 0))
            continue
        fu = rng.choice((1, 1, 1, 2, 3, 4))
        glob = fu == 4 and rng.random() < 0.3
        branch = fu == 1 and rng.random() < 0.05
        picks = {rng.randint(max(1, i - 8), i - 1) for _ in range(rng.randint(0, 3))} if i > 1 else set()
        rows.append(InstructionRow(i, "x", "bra" if branch else "op", fu, 32, rng.choice((1, 8, 16, 32)),
                                   rng.randint(1, 2) if fu == 4 else 0,
                                   0 if glob else rng.choice((6, 20, 400)), 400 if glob else 0, False, glob,
                                   0, 0, 0, producers=tuple(sorted(picks)), is_branch=branch))
    return rows


@pytest.mark.parametrize("seed", range(12))
def test_construction_invariants_on_random_kernels(seed: int) -> None:
    from engine.manybsp import eq9_comp, split_by_sync

    rows = _random_rows(seed)
    params = ManyBspParams.from_dict(dict(n_b=64, n_t=256 * (1 + seed % 4), n_SM=4, n_ws=4, warp_size=32,
                                          issue_cycle=1, mem_lat=400, warp_lnch_ovh=10, block_lnch_ovh=300,
                                          mu=2.0, l_c=100, l_m=10, max_thread_per_sm=2048, n_reg=65536,
                                          reg_per_thread=32, shmem_size=49152, shmem_per_block=0))
    ends = {100, 200}
    built = build_block_table(rows, params, ends)
    # The level-2 supersteps partition the rows in order and never cross a level-1 end.
    assert built.level2[0][0] == 0 and built.level2[-1][1] == len(rows) - 1
    assert all(b + 1 == a for (_, b), (a, _) in zip(built.level2, built.level2[1:], strict=False))
    assert all(not (rows[a].index <= e < rows[b].index) for a, b in built.level2 for e in ends)
    assert split_by_sync(built.block, ends) == built.level2
    w = params.w
    for (a, b), block in ((r, built.block[r[0]: r[1] + 1]) for r in built.level2):
        comp = eq9_comp(block)
        assert comp >= sum(x.issue_value for x in block[1:])
        assert all(comp >= sum(x.fu_value(c) for x in block) for c in (1, 2, 3, 4))
        # A row never shares a superstep with a row it reads directly before it.
        for k in range(a + 1, b + 1):
            assert rows[k - 1].index not in rows[k].producers
    for r, cell in zip(rows, built.block, strict=True):
        warps = w * max(1, r.n_ma) if r.fu == 4 else w
        for value in cell.fu.values():
            bound = r.lat_comp + (warps - 1) * 32 / r.T if value.latency else warps * 32 / r.T
            assert value.value <= bound + 1e-9
            assert value.value <= w * r.lat_comp + 1e-9
        if r.is_global_access:
            assert cell.comm == r.lat_comm * w * max(1, r.n_ma) and not cell.fu
