"""The engine's own BLOCK tables and level-2 splits against the nine printed ones (Tables X-2/X-3).

Inputs per case: ``<gpu>_<kernel>_instructions.tsv`` (Table X-1), the case's parameter block and
the printed level-1 ranges and iteration counts (the TSVs carry no loop information). The level-2
split, every BLOCK cell and every comp are the engine's own. The agreement table is printed
(``pytest -s``) and copied into docs/manybsp.md.
"""

from __future__ import annotations

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

# mm on GTX 760: its printed BLOCK table charges LDST rows with warp_size/T = 4 (T = 8, the 940MX
# value) while its own instruction table gives T = 16; the printed kernel cycles inherit that.
WT_MISPRINT = "BLOCK warp_size/T column is 4 for all LDST rows"


@dataclass
class Agreement:
    case: str
    printed_level2: int
    boundaries: int
    comps: int
    level1_errors: list[float]
    kernel: float
    printed_kernel: float
    cells: float

    @property
    def kernel_error(self) -> float:
        return abs(self.kernel - self.printed_kernel) / self.printed_kernel * 100


def _params(case: dict) -> ManyBspParams:
    values = dict(case["params"])
    values["mu"] = case["worked"]["mu"]
    return ManyBspParams.from_dict(values)


def _agreement(case: dict) -> Agreement:
    stem = f"{case['gpu']}_{case['kernel']}"
    rows = instruction_table_from_reference_tsv(REFERENCE / f"{stem}_instructions.tsv")
    printed_block = block_table_from_reference_tsv(REFERENCE / f"{stem}_block.tsv")
    iterations = [t for t, _ in case["as_used"]["parallel_comp_terms_iter_x_comp"]]
    specs = [Level1Spec(s["start"], s["end"], t) for s, t in zip(case["level1"], iterations, strict=True)]
    params = _params(case)
    result = run_manybsp(rows, params, specs)
    mine = {(s.start, s.end): s.comp for s in result.level2}
    printed = case["level2"]
    boundaries = sum((s["start"], s["end"]) in mine for s in printed)
    comps = sum(mine.get((s["start"], s["end"])) == s["comp"] for s in printed)
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
    return Agreement(f"{case['kernel']}/{case['gpu']}", len(printed), boundaries, comps, level1_errors,
                     result.kernel_exec_cycle, case["worked"]["kernel_exec_cycle"], 100 * same / total)


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
    return table


def test_level2_boundaries(agreements: list[Agreement]) -> None:
    n = sum(a.printed_level2 for a in agreements)
    assert sum(a.boundaries for a in agreements) / n >= 0.97
    for a in agreements:
        assert a.boundaries / a.printed_level2 >= 0.94, a.case


def test_level2_comps(agreements: list[Agreement]) -> None:
    n = sum(a.printed_level2 for a in agreements)
    assert sum(a.comps for a in agreements) / n >= 0.87
    # Without the one case whose printed table contradicts its own T column, >= 93 %.
    rest = [a for a in agreements if a.case != "mm/gtx760"]
    assert sum(a.comps for a in rest) / sum(a.printed_level2 for a in rest) >= 0.93


def test_kernel_cycles(agreements: list[Agreement]) -> None:
    mm760 = next(c for c in CASES if (c["kernel"], c["gpu"]) == ("mm", "gtx760"))
    assert any(d.startswith(WT_MISPRINT) for d in mm760["discrepancies"])
    for a in agreements:
        if a.case == "mm/gtx760":
            continue  # WT_MISPRINT: the printed cycles follow T = 8, the instruction table says 16
        assert a.kernel_error <= 8.0, a.case
    within = sum(a.kernel_error <= 3.0 for a in agreements)
    assert within >= 6


def test_level1_comps(agreements: list[Agreement]) -> None:
    errors = [e for a in agreements for e in a.level1_errors]
    assert sum(e <= 2.0 for e in errors) >= 15, errors
    assert sum(e == 0 for e in errors) >= 7


def test_cells(agreements: list[Agreement]) -> None:
    for a in agreements:
        assert a.cells >= (75.0 if a.case == "mm/gtx760" else 93.0), a.case


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
