"""The pieces that keep a 10^5-instruction kernel's predict within its time (issue 35): rows
filled in one step, costs and symbols found once per body, simulator arrays shared between
descriptions of one instruction tuple. Each must give exactly what the plain way gives."""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from engine.analysis import analyze_kernel
from engine.frozen_rows import built
from engine.manybsp.rows import BlockRow, FuCell, InstructionRow
from engine.pipeline import simulator
from engine.pipeline.description import KernelDescription, Loop, Run, make_instruction
from engine.profiles import load_profile
from engine.ptx import parse_ptx
from engine.ptx.symbols import symbols_named
from tests import ptx_gen

SAMPLES = Path(__file__).resolve().parents[1] / "samples" / "ptx"

_ROW = dict(index=3, text="add.s32 %r1, %r2, 1;", opcode="add.s32", fu=1, n_fu=1, T=16.0, n_ma=0,
            lat_comp=4.0, lat_comm=0.0, is_barrier=False, is_global_access=False, u=4, d=1, p=0,
            producers=(1, 2), is_branch=False, labels=("$L1",), location=None, cuda_location=None,
            is_default_cost=False, cost_source="rule add", loop="$L__BB0_2")


def test_a_row_built_in_one_step_is_the_row_its_init_builds():
    fast, plain = built(InstructionRow, **_ROW), InstructionRow(**_ROW)
    assert type(fast) is InstructionRow
    assert fast == plain and hash(fast) == hash(plain) and repr(fast) == repr(plain)
    assert replace(fast, u=9) == replace(plain, u=9)
    with pytest.raises(AttributeError):
        fast.u = 9                                      # still frozen  # type: ignore[misc]
    block = dict(index=1, op="add", issue=1.0, fu={1: FuCell(0, 2)}, warp_over_T=2.0, comm=0.0, ovh=0.0,
                 sync=0.0, u=2, d=1, p=0)
    assert built(BlockRow, **block) == BlockRow(**block)


def test_values_that_are_not_exactly_the_fields_go_to_the_init():
    short = {k: v for k, v in _ROW.items() if k != "loop"}          # a default left to apply
    assert built(InstructionRow, **short).loop is None
    with pytest.raises(TypeError):
        built(InstructionRow, **_ROW, colour="red")                 # an unknown name is refused
    with pytest.raises(TypeError):
        built(InstructionRow, **{k: v for k, v in _ROW.items() if k != "index"})   # a field missing


@dataclass(frozen=True)
class _Checked:
    value: int
    doubled: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        object.__setattr__(self, "doubled", 2 * self.value)


@dataclass(frozen=True, slots=True)
class _Slotted:
    value: int


def test_classes_with_post_init_or_slots_keep_their_own_init():
    assert built(_Checked, value=4).doubled == 8
    assert built(_Slotted, value=4) == _Slotted(4)


def test_costs_of_a_body_are_its_instructions_costs_and_are_kept_by_identity():
    module = parse_ptx((SAMPLES / "hotspot.sm_90.ptx").read_text())
    function = module.functions[0]
    analysis = analyze_kernel(function, None, module)
    profile = load_profile("h100")
    costs = profile.costs_of(function.instructions, analysis.classifications)
    assert costs == [profile.cost(i, c) for i, c in zip(function.instructions, analysis.classifications, strict=True)]
    assert profile.costs_of(function.instructions, analysis.classifications) is costs
    assert profile.costs_of(list(function.instructions), analysis.classifications) is not costs
    # what the profile remembers of the kernels it costed does not travel with it
    copy = pickle.loads(pickle.dumps(profile))
    assert copy == profile and "_cost_lists" not in copy.__dict__ and "_costs" not in copy.__dict__
    assert copy.costs_of(function.instructions, analysis.classifications) == costs


def test_symbols_named_are_found_at_any_depth_once_per_body():
    text = ptx_gen.HEADER + (
        ".shared .align 4 .b8 tile[256];\n.global .align 4 .u32 counter;\n"
        ".visible .entry k(.param .u64 p)\n{\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<4>;\n"
        "\tmov.u64 %rd1, tile;\n\tld.shared.u32 %r1, [tile+8];\n\tatom.global.add.u32 %r2, [counter], 1;\n"
        "\tret;\n}\n")
    function = parse_ptx(text).kernel("k")
    assert symbols_named(function) == {"tile", "counter"}
    assert symbols_named(function) is symbols_named(function)
    function.body = list(function.body[:1])                 # a new body: walked again
    assert symbols_named(function) == {"tile"}


def test_descriptions_sharing_instructions_share_their_arrays_and_times():
    ins = (make_instruction("a", 0, 1, 4), make_instruction("b", 0, 2, 6, deps=(0,)))
    d = KernelDescription(instructions=ins, subsystems=("alu",), paths=((Loop((Run((0, 1)),), 30),),),
                          warps_per_block=2, blocks=1, resident_blocks=1)
    other_path = d.with_changes(paths=((Loop((Run((1, 0)),), 7),),))
    simulator._INSTRUCTION_CACHE.clear()
    simulator._STATIC_CACHE.clear()
    first, second = simulator.simulate(d), simulator.simulate(other_path)
    assert len(simulator._INSTRUCTION_CACHE) == 1 and len(simulator._STATIC_CACHE) == 2
    simulator._INSTRUCTION_CACHE.clear()
    simulator._STATIC_CACHE.clear()
    assert simulator.simulate(other_path).cycles == second.cycles
    assert simulator.simulate(d).cycles == first.cycles
    # a list of instructions could change after a run: nothing is kept for it
    listed = d.with_changes(instructions=list(ins))
    simulator._INSTRUCTION_CACHE.clear()
    assert simulator.simulate(listed).cycles == first.cycles and not simulator._INSTRUCTION_CACHE
