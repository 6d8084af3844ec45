"""The roofline (issue 32, part 1): work, bytes per level, ceilings and the bound, read by the
window's Roofline tab, ``predict --roofline`` and ``export --roofline-png`` from one function."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.evaluation import Evaluator
from engine.evaluation.roofline import (
    WORK_FLOP,
    WORK_INSTRUCTION,
    flop_per_warp_instruction,
    roofline,
)
from engine.inputs import resolve_inputs
from engine.ptx import parse_ptx
from engine.units import Unit

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def _evaluate(name: str, config: str | None = None):
    inputs = resolve_inputs(SAMPLES / "ptx" / f"{name}.sm_90.ptx", launch_file=SAMPLES / f"{name}.launch.toml",
                            config=config, profile="h100")
    return Evaluator().evaluate(inputs, trace=False)


@pytest.fixture(scope="module")
def mm():
    return _evaluate("mm", "case")


def test_matrix_multiply_counts_two_m_n_k_flop(mm):
    # C (320 × 640) = A (320 × 320) · B (320 × 640): one fma per (row, column, k)
    r = roofline(mm)
    assert r.work == WORK_FLOP
    assert r.work_total == pytest.approx(2 * 320 * 640 * 320)
    assert set(r.work_by_pipe) == {"FP32"}
    fp32 = r.ceiling("FP32")
    assert fp32.used and not r.ceiling("FP64").used
    # the ceiling is 64 FLOP per warp fma over the profile's λ, on every SM the grid fills
    lam = mm.profile.cost_for_opcode("fma.rn.f32", Unit.ALU).lam
    assert fp32.per_second == pytest.approx(64 / lam * 132 * 1980e6)


def test_levels_bytes_and_bound(mm):
    r = roofline(mm)
    by_level = {p.level: p for p in r.points}
    traffic = mm.traffic
    assert by_level["DRAM"].bytes == pytest.approx(traffic.dram_read_bytes + traffic.dram_write_bytes)
    # every level sees at least what the level below it serves
    assert by_level["L1"].bytes >= by_level["L2"].bytes >= traffic.l2_bytes
    assert by_level["L2"].intensity == pytest.approx(r.work_total / by_level["L2"].bytes)
    # the bound is the ceiling needing the longest time, and the attainable is the lower roof
    assert r.bound == max(r.times, key=r.times.get)
    dram = r.ceiling("DRAM")
    assert r.attainable("DRAM") == pytest.approx(min(r.peak_compute().per_second,
                                                     dram.per_second * by_level["DRAM"].intensity))
    assert r.seconds == pytest.approx(mm.models["pipeline"].kernel_cycles / 1980e6)
    assert r.bound in r.sentence()
    payload = r.as_dict()
    assert payload["bound"] == r.bound and len(payload["levels"]) == 3


def test_a_kernel_without_floating_point_work_counts_instructions():
    ev = _evaluate("copy")
    r = roofline(ev)
    assert r.work == WORK_INSTRUCTION
    d = ev.description
    per_block = sum(d.dynamic_counts(d.path_of_warp(w)).sum() for w in range(d.warps_per_block))
    assert r.work_total == pytest.approx(per_block * ev.state.launch.n_blocks)
    assert [c.name for c in r.compute] == ["issue"]
    assert any("no floating-point" in n for n in r.notes)
    assert r.bound == "DRAM"          # a copy streams DRAM
    with pytest.raises(Exception, match="roofline work"):
        roofline(ev, "bytes")


def test_flop_counting_rules():
    module = parse_ptx("""
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p)
{
  .reg .f32 %f<4>; .reg .f64 %fd<3>; .reg .b32 %r<9>; .reg .f16x2 %h<4>;
  fma.rn.f32 %f1, %f2, %f3, %f1;
  add.f64 %fd1, %fd2, %fd1;
  fma.rn.f16x2 %h1, %h2, %h3, %h1;
  sqrt.rn.f32 %f1, %f1;
  add.s32 %r1, %r2, %r3;
  mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1,%f2,%f3,%f1}, {%r1,%r2,%r3,%r4}, {%r5,%r6}, {%f1,%f2,%f3,%f1};
  ret;
}
""")
    counted = [flop_per_warp_instruction(i) for i in module.kernels[0].instructions]
    assert counted[:6] == [("FP32", 64.0), ("FP64", 32.0), ("FP16", 128.0), None, None,
                           ("tensor", 2.0 * 16 * 8 * 16)]


def test_cli_predict_and_export_roofline(tmp_path):
    from engine.cli import main as cli_main
    from gui.render import QtRenderer

    ptx = str(SAMPLES / "ptx" / "hotspot.sm_90.ptx")
    launch = str(SAMPLES / "hotspot.launch.toml")
    out = tmp_path / "rl.png"
    assert cli_main(["export", ptx, "--launch", launch, "--roofline-png", str(out)], renderer=QtRenderer()) == 0
    from PySide6.QtGui import QImage

    image = QImage(str(out))
    assert (image.width(), image.height()) == (1600, 900)


def test_cli_predict_roofline_json(capsys):
    from engine.cli import main as cli_main

    ptx = str(SAMPLES / "ptx" / "mm.sm_90.ptx")
    assert cli_main(["predict", ptx, "--launch", str(SAMPLES / "mm.launch.toml"), "--config", "case",
                     "--profile", "h100", "--model", "pipeline", "--roofline", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    chart = payload["roofline"]
    assert chart["work_total"] == pytest.approx(2 * 320 * 640 * 320)
    assert chart["bound"] in {"L1", "L2", "DRAM", "FP32"}
    assert chart["kernel_cycles"] == payload["models"]["pipeline"]["kernel_cycles"]
