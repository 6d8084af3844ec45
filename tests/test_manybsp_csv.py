"""CSV export / import of the Many-BSP tables, round trips, edits and malformed files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.errors import ModelError, TableFormatError
from engine.manybsp import (
    Level1Spec,
    ManyBspParams,
    Overrides,
    export_block_table,
    export_instruction_table,
    export_supersteps,
    import_block_table,
    import_level1_specs,
    instruction_table_from_reference_tsv,
    predict_from_block,
    run_manybsp,
)

REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "reference" / "manybsp"
pytestmark = pytest.mark.skipif(not REFERENCE.exists(), reason="shared/reference/manybsp missing")


@pytest.fixture(scope="module")
def hotspot() -> tuple:
    cases = json.loads((REFERENCE / "cases.json").read_text())["cases"]
    case = next(c for c in cases if (c["kernel"], c["gpu"]) == ("hotspot", "gtx760"))
    values = dict(case["params"])
    values["mu"] = case["worked"]["mu"]
    params = ManyBspParams.from_dict(values)
    rows = instruction_table_from_reference_tsv(REFERENCE / "gtx760_hotspot_instructions.tsv")
    specs = [Level1Spec(s["start"], s["end"], s["iterations"]) for s in case["level1"]]
    return rows, params, specs, run_manybsp(rows, params, specs)


def test_round_trip_gives_the_same_prediction(hotspot: tuple, tmp_path: Path) -> None:
    rows, params, specs, result = hotspot
    export_block_table(result.block, tmp_path / "block.csv")
    export_supersteps(result.level1, tmp_path / "supersteps.csv")
    block = import_block_table(tmp_path / "block.csv")
    again = predict_from_block(block, params, import_level1_specs(tmp_path / "supersteps.csv"))
    assert block == result.block
    assert again.prediction.as_dict() == result.prediction.as_dict()
    def steps(r: object) -> list[tuple]:
        return [(s.start, s.end, s.comp) for s in r.level2]  # type: ignore[attr-defined]

    assert steps(again) == steps(result)


def test_edited_cell_changes_the_prediction(hotspot: tuple, tmp_path: Path) -> None:
    rows, params, specs, result = hotspot
    text = export_block_table(result.block)
    lines = text.splitlines()
    # Row 59 (div.rn.f32) costs 139+2 on FU3; make it 339+2.
    k = next(i for i, line in enumerate(lines) if line.startswith("59,"))
    lines[k] = lines[k].replace("139+2", "339+2")
    (tmp_path / "edited.csv").write_text("\n".join(lines) + "\n")
    edited = predict_from_block(import_block_table(tmp_path / "edited.csv"), params, specs)
    assert edited.level1[0].comp == result.level1[0].comp + 200
    assert edited.kernel_exec_cycle > result.kernel_exec_cycle
    # The same edit as an override gives the same numbers and is marked.
    over = run_manybsp(rows, params, specs, Overrides(block_cells={(59, "fu3"): "339+2"}))
    assert over.prediction.as_dict() == edited.prediction.as_dict()
    assert "cell:59:fu3" in over.overridden


def test_latency_and_n_ma_overrides(hotspot: tuple) -> None:
    rows, params, specs, result = hotspot
    slower = run_manybsp(rows, params, specs, Overrides(latencies={42: {"lat_comm": 400}}, n_ma={51: 4}))
    assert slower.prediction["block_comm"] > result.prediction["block_comm"]
    assert {"latency:42:lat_comm", "n_ma:51"} <= slower.overridden
    with pytest.raises(ModelError, match="no instruction 999"):
        run_manybsp(rows, params, specs, Overrides(n_ma={999: 1}))
    with pytest.raises(ModelError, match="negative latency"):
        run_manybsp(rows, params, specs, Overrides(latencies={42: {"lat_comm": -1}}))
    with pytest.raises(ModelError, match="BLOCK column"):
        run_manybsp(rows, params, specs, Overrides(block_cells={(42, "fu9"): 1}))


def test_sync_override_moves_a_boundary(hotspot: tuple) -> None:
    rows, params, specs, result = hotspot
    # Row 2 has sync 0 inside superstep <1~16>; a non-zero sync splits it in two.
    split = run_manybsp(rows, params, specs, Overrides(block_cells={(2, "sync"): 5}))
    assert len(split.level2) == len(result.level2) + 1
    assert (split.level2[0].start, split.level2[0].end) == (1, 2)


def test_instruction_table_export(hotspot: tuple, tmp_path: Path) -> None:
    rows = hotspot[0]
    text = export_instruction_table(rows, tmp_path / "rows.csv")
    assert text.splitlines()[0].startswith("inst,text,opcode,fu")
    assert len(text.splitlines()) == len(rows) + 1
    assert '"ld.param.u32 %r9, [_Kernel_param_0];"' in text or "ld.param.u32 %r9" in text


@pytest.mark.parametrize(
    ("content", "row", "column", "message"),
    [
        ("", 1, "", "empty file"),
        ("inst,op,issue\n1,add,2\n", 1, "fu1", "missing column"),
        ("inst,op,issue,fu1,fu2,fu3,fu4,warp_over_T,comm,ovh,sync,u,d,p\n", 2, "", "no rows"),
        ("inst,op,issue,fu1,fu2,fu3,fu4,warp_over_T,comm,ovh,sync,u,d,p\n1,add,x,2,,,,1,0,0,0,0,0,0\n",
         2, "issue", "not a number"),
        ("inst,op,issue,fu1,fu2,fu3,fu4,warp_over_T,comm,ovh,sync,u,d,p\n1,add,2,16+a,,,,1,0,0,0,0,0,0\n",
         2, "fu1", "FU cell"),
        ("inst,op,issue,fu1,fu2,fu3,fu4,warp_over_T,comm,ovh,sync,u,d,p\n1,add,2,2,,,,1,0,0,0,0,0\n",
         2, "p", "cells"),
        ("inst,op,issue,fu1,fu2,fu3,fu4,warp_over_T,comm,ovh,sync,u,d,p\n1,add,2,2,,,,1,-5,0,0,0,0,0\n",
         2, "comm", "negative"),
        ("inst,op,issue,fu1,fu2,fu3,fu4,warp_over_T,comm,ovh,sync,u,d,p\n2,a,2,2,,,,1,0,0,0,0,0,0\n"
         "1,b,2,2,,,,1,0,0,0,0,0,0\n", 3, "inst", "out of order"),
        ("inst,op,issue,fu1,fu2,fu3,fu4,warp_over_T,comm,ovh,sync,u,d,p\n1.5,a,2,2,,,,1,0,0,0,0,0,0\n",
         2, "inst", "not an integer"),
    ],
)
def test_malformed_block_csv(tmp_path: Path, content: str, row: int, column: str, message: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(content)
    with pytest.raises(TableFormatError, match=message) as info:
        import_block_table(path)
    assert info.value.row == row
    assert info.value.column == column
    assert info.value.file == str(path)


def test_missing_file_and_bad_level1_csv(tmp_path: Path) -> None:
    with pytest.raises(TableFormatError, match="cannot read"):
        import_block_table(tmp_path / "nope.csv")
    path = tmp_path / "steps.csv"
    path.write_text("level,index,start,end,comp,comm,ovh,iterations,iterations_known,parent,reason\n"
                    "1,1,5,3,0,0,0,1,1,,\n")
    with pytest.raises(TableFormatError, match="before start") as info:
        import_level1_specs(path)
    assert (info.value.row, info.value.column) == (2, "end")


def test_the_slowest_warps_iterations_round_trip_and_are_checked(hotspot: tuple, tmp_path: Path) -> None:
    rows, params, specs, _ = hotspot
    specs = [Level1Spec(s.start, s.end, s.iterations, slowest=s.iterations * 3 if k == 0 else None)
             for k, s in enumerate(specs)]
    result = run_manybsp(rows, params, specs)
    export_supersteps(result.level1, tmp_path / "supersteps.csv")
    again = import_level1_specs(tmp_path / "supersteps.csv")
    assert [s.slowest for s in again] == [s.slowest for s in specs]
    # a file written before the column existed reads as "every warp alike"
    old = tmp_path / "old.csv"
    old.write_text("level,index,start,end,comp,comm,ovh,iterations,iterations_known,parent,reason\n"
                   "1,1,1,3,0,0,0,7,1,,\n")
    assert import_level1_specs(old)[0].slowest is None
    bad = tmp_path / "bad.csv"
    bad.write_text("level,index,start,end,comp,comm,ovh,iterations,iterations_known,parent,reason,"
                   "slowest_iterations\n1,1,1,3,0,0,0,7,1,,,5\n")
    with pytest.raises(TableFormatError, match="below the mean") as info:
        import_level1_specs(bad)
    assert (info.value.row, info.value.column) == (2, "slowest_iterations")
