"""Matrix fragments (wmma loads/stores), shared-memory phases, L2 write-back and the DRAM
fetch rules, against what the microbenchmarks and Nsight Compute measured."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from engine.analysis import analyze_kernel
from engine.evaluation import Evaluator, state_for
from engine.inputs import resolve_inputs
from engine.mechanisms import without
from engine.memory import analyze_memory
from engine.memory.access_report import AccessInfo
from engine.memory.fragments import fragment_of
from engine.memory.hierarchy import dram_fetch_factor, write_back_share
from engine.memory.patterns import shared_stats
from engine.pipeline.adapter import _find_function
from engine.profiles import load_profile
from engine.ptx import parse_ptx
from engine.units import MemorySpace, Unit
from engine.validation import SUITES, load_measurements

V2 = Path(__file__).resolve().parents[1] / "samples" / "v2"


def _inputs(family: str, config: str, profile: str = "h100"):
    inputs = resolve_inputs(V2 / "ptx" / f"{family}.sm_90.ptx", profile=profile,
                            launch_file=V2 / f"{family}.launch.toml", config=config)
    return inputs


def _report(family: str, config: str):
    inputs = _inputs(family, config)
    analysis = analyze_kernel(_find_function(inputs.module, inputs.kernel_name), inputs.launch, inputs.module)
    return analyze_memory(analysis, inputs.launch, inputs.module)


def _instruction(text: str):
    ptx = (".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n"
           ".reg .b32 %r<20>;\n.reg .f32 %f<9>;\n.reg .b64 %rd<3>;\n" + text + "\nret;\n}\n")
    return parse_ptx(ptx, "k.ptx").functions[0].instructions[0]


# ---- fragments ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "rows", "row_bytes", "lane_bytes"), [
    ("wmma.load.a.sync.aligned.row.m16n16k16.shared.f16 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%r9], %r10;",
     16, 32, 16),
    ("wmma.load.b.sync.aligned.col.m16n16k16.global.f16 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%rd1], %r10;",
     16, 32, 16),
    ("wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%rd1], {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}, %r10;",
     16, 64, 32),
    ("wmma.load.a.sync.aligned.row.m32n8k16.f16 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%rd1], %r10;",
     32, 32, 32),
    ("wmma.load.a.sync.aligned.col.m8n32k16.f16 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%rd1], %r10;",
     16, 16, 8),
])
def test_a_fragment_is_its_rows_at_the_stride(text, rows, row_bytes, lane_bytes) -> None:
    fragment = fragment_of(_instruction(text))
    assert fragment is not None
    assert (fragment.rows, fragment.row_bytes, fragment.lane_bytes) == (rows, row_bytes, lane_bytes)
    assert fragment.rows * fragment.row_bytes == 32 * fragment.lane_bytes


def test_other_instructions_are_no_fragment() -> None:
    assert fragment_of(_instruction("ld.global.f32 %f1, [%rd1];")) is None
    assert fragment_of(_instruction(
        "wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32 {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}, "
        "{%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, "
        "{%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8};")) is None


def test_lanes_take_the_rows_as_ldmatrix_does() -> None:
    fragment = fragment_of(_instruction(
        "wmma.load.b.sync.aligned.row.m16n16k16.shared.f16 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%r9], %r10;"))
    # two warps: the second's fragment starts 4096 bytes further; ldm 64 halves = 128 bytes
    base = np.repeat([1024, 5120], 32)
    addresses = fragment.addresses(base, np.full(64, 64))
    lane = np.arange(32)
    assert list(addresses[:32]) == list(1024 + (lane % 16) * 128 + (lane // 16) * 16)
    assert list(addresses[32:]) == list(addresses[:32] + 4096)


def test_bank_conflicts_of_the_gemm_tiles_are_its_rows_on_shared_banks() -> None:
    # wmma_gemm_smem: the A tile rows are 32 bytes apart (ldm 16), the B tile rows 128 (ldm 64):
    # every 8x8 matrix of B falls on the same four banks, 8 wavefronts each, 32 per load
    report = _report("tensorcore", "wmma_gemm_smem/b128")
    loads = {a.text.split()[0].split(".")[2]: a for a in report.accesses if a.text.startswith("wmma.load")}
    assert loads["b"].bank_conflict_degree == 32
    assert loads["a"].bank_conflict_degree == 8      # 2 per 8x8 matrix, served a quarter warp at a time
    with without(["shared_phases"]):
        whole = {a.text.split()[0].split(".")[2]: a for a in _report("tensorcore", "wmma_gemm_smem/b128").accesses
                 if a.text.startswith("wmma.load")}
    assert whole["a"].bank_conflict_degree == 4      # the whole warp's 128 words spread over 32 banks
    with without(["matrix_fragments"]):
        assert not any(a.text.startswith("wmma") for a in _report("tensorcore", "wmma_gemm_smem/b128").accesses)


def test_phases_add_up_only_for_wide_accesses() -> None:
    # 16-byte accesses 128 bytes apart: each quarter warp's 8 lanes on the same 4 banks
    addresses = np.arange(32) * 128
    assert shared_stats([addresses], 16).degree_max == 32
    # 16 bytes each, contiguous: 4 conflict-free phases
    assert shared_stats([np.arange(32) * 16], 16).degree_max == 4
    # 4-byte accesses: one phase, as before
    assert shared_stats([np.arange(32) * 4], 4).degree_max == 1
    assert shared_stats([np.arange(32) * 128], 4).degree_max == 32


def test_the_gemm_runs_as_long_as_its_shared_memory_pipe_needs() -> None:
    """Nsight Compute: L1/TEX throughput 94 % of peak on wmma_gemm_smem/b128 (503,708 cycles)."""
    measured = load_measurements(SUITES["v2"].runs["h100"])["tensorcore/wmma_gemm_smem/b128"].median
    inputs = _inputs("tensorcore", "wmma_gemm_smem/b128")
    inputs = replace(inputs, launch=replace(inputs.launch, smem_dynamic=4096))
    ev = Evaluator().evaluate(inputs, state_for(inputs), trace=False, only=["pipeline"])
    assert ev.models["pipeline"].kernel_cycles == pytest.approx(measured, rel=0.15)
    with without(["matrix_fragments", "shared_phases"]):
        before = Evaluator().evaluate(inputs, state_for(inputs), trace=False, only=["pipeline"])
    assert before.models["pipeline"].kernel_cycles < 0.7 * measured


def test_tensor_costs_are_measured_ones() -> None:
    h100 = load_profile("h100")
    mma = h100.cost_for_opcode("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", Unit.TENSOR)
    wmma = h100.cost_for_opcode("wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32", Unit.TENSOR)
    assert not mma.is_default and not wmma.is_default
    assert 1.4 < mma.lam < 1.7 and 23 < mma.Lam < 26
    assert wmma.lam == pytest.approx(2 * mma.lam, rel=1e-3)     # two HMMA.16816 per wmma


# ---- L2 write-back --------------------------------------------------------------------------------

def _store(written: float, read_only: float = 0.0) -> AccessInfo:
    return AccessInfo(0, 1, "st.global.f32", MemorySpace.GLOBAL, 4, None, None, "store",
                      kernel_written_bytes=written, kernel_read_only_bytes=read_only)


def test_stores_reach_dram_only_beyond_what_l2_keeps_dirty() -> None:
    h100, h200 = load_profile("h100"), load_profile("h200")
    mb = 2**20
    assert write_back_share(_store(16 * mb), h100) == 0
    # store_wb.cu on the H100: 128 MiB stored, 109.4 MB written back during the kernel
    assert write_back_share(_store(128 * mb), h100) * 128 * mb == pytest.approx(109.4e6, rel=0.02)
    # k_copy: as many bytes read as written, 113.4 MB written of 128 MiB
    assert write_back_share(_store(128 * mb, 128 * mb), h100) * 128 * mb == pytest.approx(113.4e6, rel=0.02)
    # the H200's L2 keeps more
    assert write_back_share(_store(64 * mb), h200) < write_back_share(_store(64 * mb), h100)
    load = replace(_store(128 * mb), kind="load")
    assert write_back_share(load, h100) == 1


@pytest.mark.parametrize(("family", "config"), [("triangular", "collatz/b256"), ("half", "h2_fma_chain/b256")])
def test_an_output_that_fits_in_l2_is_not_written_during_the_kernel(family, config) -> None:
    inputs = _inputs(family, config)
    ev = Evaluator().evaluate(inputs, state_for(inputs), trace=False, only=["roofline"])
    m = load_measurements(SUITES["v2"].runs["h100"])[f"{family}/{config}"]
    measured_write = m.metric("dram__bytes_write.sum")
    assert ev.traffic.dram_write_bytes <= measured_write + 1e6
    assert ev.traffic.dram_read_bytes == pytest.approx(m.metric("dram__bytes_read.sum"), rel=0.05)


# ---- DRAM fetch rules -----------------------------------------------------------------------------

def test_a_gemm_panel_is_read_from_dram_once() -> None:
    """wmma_gemm_smem: every block of a row reads the same A panel; ncu: 16.8 MB read (A and B)."""
    inputs = _inputs("tensorcore", "wmma_gemm_smem/b128")
    ev = Evaluator().evaluate(inputs, state_for(inputs), trace=False, only=["roofline"])
    assert ev.traffic.dram_read_bytes == pytest.approx(16.78e6, rel=0.1)
    loads = [a for a in ev.memory.accesses if a.kind == "load" and a.space is MemorySpace.GLOBAL]
    # each A row is walked 32 bytes per k step: the other half of each 64-byte fetch is used
    assert all(a.paired_share == 1.0 and dram_fetch_factor(a) == 1.0 for a in loads)


def test_a_random_gather_still_fetches_64_bytes_per_sector() -> None:
    report = _report("gather", "gather_f32/rand-b256")
    gathered = [a for a in report.accesses if a.kind == "load" and a.non_affine]
    assert gathered and all(dram_fetch_factor(a) == pytest.approx(2.0, rel=0.05) for a in gathered)


# ---- L2 reuse of neighbours and merged misses -------------------------------------------------------

def _traffic(family: str, config: str):
    inputs = _inputs(family, config)
    return Evaluator().evaluate(inputs, state_for(inputs), trace=False, only=["roofline"]).traffic


def test_a_halo_is_read_again_from_l2_by_the_block_below() -> None:
    """stencil2d_5pt_tiled/b32x8 reads a 64 MiB image once from DRAM (ncu: 67.3 MB read)."""
    measured = load_measurements(SUITES["v2"].runs["h100"])["stencil2d/stencil2d_5pt_tiled/b32x8"]
    read = measured.metric("dram__bytes_read.sum")
    assert _traffic("stencil2d", "stencil2d_5pt_tiled/b32x8").dram_read_bytes == pytest.approx(read, rel=0.25)


def test_the_neighbour_distance_is_the_blocks_launched_in_between() -> None:
    from engine.memory.access_analysis import _neighbour_distance
    from engine.memory.affine import Affine

    both = Affine(0, (("ctaid.x", 128), ("ctaid.y", 16384), ("tid.x", 4)))
    rows = Affine(0, (("ctaid.y", 16384), ("tid.x", 4)))
    columns = Affine(0, (("ctaid.x", 128), ("tid.x", 4)))
    grid = (128, 512, 1)
    assert _neighbour_distance(both, grid) == pytest.approx(128 / (128 * 512))
    assert _neighbour_distance(rows, grid) == pytest.approx(128 / (128 * 512))
    assert _neighbour_distance(columns, grid) == pytest.approx(1 / (128 * 512))


def test_the_first_waves_simultaneous_misses_read_dram_once() -> None:
    """nbody_naive: every block reads all 32,768 positions (0.52 MB) at about the same time;
    ncu counts 0.53 MB of DRAM reads."""
    assert _traffic("nbody", "nbody_naive/b128").dram_read_bytes == pytest.approx(0.53e6, rel=0.1)
