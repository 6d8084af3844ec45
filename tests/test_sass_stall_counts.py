"""The stall counts ptxas writes into each SASS instruction's control field (engine.sass.control_fields),
the SASS map's sums of them per PTX instruction, and the simulator holding a warp that long.

The assembling tests need ptxas and nvdisasm (the nvidia-cuda-nvcc / nvidia-cuda-nvdisasm wheels);
without them they are skipped with the reason.
"""

from __future__ import annotations

import struct
from fractions import Fraction

import pytest

from engine.errors import SimulationError
from engine.mechanisms import without
from engine.pipeline.description import KernelDescription, Run, StaticInstruction
from engine.pipeline.simulator import simulate
from engine.ptx import parse_ptx
from engine.sass import SassMap
from engine.sass.control_fields import stall_counts
from tests.test_sass_mapping import _map, _source, needs_tools

# a chain of dependent FP32 multiplies: ptxas must keep each one the FMA pipe's latency after
# the one before (no interlock for fixed-latency results), so their stall counts add up to it
CHAIN = _source("""
.visible .entry k_chain(
	.param .u64 k_chain_param_0
)
{
	.reg .f32 	%f<10>;
	.reg .b64 	%rd<3>;

	ld.param.u64 	%rd1, [k_chain_param_0];
	cvta.to.global.u64 	%rd2, %rd1;
	ld.global.f32 	%f1, [%rd2];
	mul.f32 	%f2, %f1, %f1;
	mul.f32 	%f3, %f2, %f2;
	mul.f32 	%f4, %f3, %f3;
	mul.f32 	%f5, %f4, %f4;
	mul.f32 	%f6, %f5, %f5;
	st.global.f32 	[%rd2], %f6;
	ret;
}
""")


def test_a_file_that_is_not_an_elf_has_no_stall_counts() -> None:
    assert stall_counts(b"") == {}
    assert stall_counts(b"not an ELF file at all" * 8) == {}
    # an ELF header whose section table lies beyond the file
    header = bytearray(64)
    header[:6] = b"\x7fELF\x02\x01"
    struct.pack_into("<Q", header, 0x28, 10_000)
    struct.pack_into("<HHH", header, 0x3A, 64, 3, 1)
    assert stall_counts(bytes(header)) == {}


@needs_tools
def test_dependent_multiplies_carry_the_fma_latency_in_their_stall_counts(tmp_path, monkeypatch) -> None:
    m = _map(CHAIN, "k_chain", tmp_path, monkeypatch)
    body = parse_ptx(CHAIN, "t.ptx").kernel("k_chain").instructions
    muls = [i.index for i in body if i.opcode == "mul"]
    assert len(muls) == 5 and all(m.weights[i] == 1 for i in muls)
    # every multiply but the last waits for its result before the next one issues: the H100's
    # FP32 latency (4 cycles) is in its stall count, as ptxas wrote it
    assert all(m.stall_cycles[i] >= 4 for i in muls[:-1])
    # an instruction without SASS (folded away) holds no cycles
    cvta = next(i.index for i in body if i.opcode == "cvta")
    assert m.weights[cvta] == 0 and m.stall_cycles[cvta] == 0
    # the map keeps them through its cache file
    assert SassMap.from_json(m.to_json()).stall_cycles == m.stall_cycles


def _one_warp(gaps: tuple[float, float]) -> KernelDescription:
    instructions = tuple(StaticInstruction(name=f"i{k}", unit=0, lam=Fraction(1), Lam=Fraction(1),
                                           issue_gap=gap) for k, gap in enumerate(gaps))
    return KernelDescription(instructions=instructions, subsystems=("alu",), paths=((Run((0, 1, 0, 1)),),),
                             warps_per_block=1, blocks=1, resident_blocks=1, issue_limit=None)


def test_the_simulator_holds_a_warp_its_instructions_stall_counts() -> None:
    # independent instructions of one warp: one per cycle, or one per stall count
    assert simulate(_one_warp((0.0, 0.0))).cycles == 4
    held = simulate(_one_warp((5.0, 0.0)))
    assert held.cycles == 5 + 1 + 5 + 1
    # the wait beyond the issue interval is charged as a compute dependency: 4 cycles twice
    assert held.aggregates.stall_cycles["compute_dependency"] == 8


def test_a_negative_or_infinite_stall_count_is_refused() -> None:
    for bad in (-1.0, float("inf"), float("nan")):
        with pytest.raises(SimulationError, match="issue gap"):
            simulate(_one_warp((bad, 0.0)))


@needs_tools
def test_the_mechanism_switch_turns_the_hold_off(tmp_path, monkeypatch) -> None:
    from engine.pipeline.adapter import issue_gaps

    m = _map(CHAIN, "k_chain", tmp_path, monkeypatch)
    assert issue_gaps(m)
    with without(["sass_stall_counts"]):
        assert issue_gaps(m) == {}
    assert issue_gaps(None) == {}
