"""Many-BSP never predicts nonsense: on the sample kernels and the Triton/numba corpus, with every
shipped profile (those without a [manybsp] section two a file, in turn), at one block and at the
default launch, its cycles are positive (or a one-line reason says why there are none) and do not
shrink when the grid grows.

A profile without a [manybsp] section runs on figures derived from its pipeline figures; the launch
overheads cannot be derived, so its prediction is refused (one line) while the BLOCK table and the
supersteps are still built, and with the overheads given as parameter overrides the equations run
on the derived figures and must obey the same rules."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest

from engine.errors import WarplineError
from engine.evaluation import Evaluator, state_for
from engine.inputs import KernelInputs, resolve_inputs
from engine.launch import Launch
from engine.profiles import list_profiles, load_profile
from engine.ptx import load_ptx

ROOT = Path(__file__).resolve().parents[1]
FILES = (sorted((ROOT / "samples" / "ptx").glob("*.sm_90.ptx"))
         + sorted((ROOT / "tests" / "corpus" / "triton").glob("*.ptx"))
         + sorted((ROOT / "tests" / "corpus" / "numba").glob("*.ptx"))[::4])
# Profiles made from specifications (tools/spec_profiles.py) state [manybsp] figures carried over
# from h100: they run the same code on h100's numbers, so they take turns like the derived ones.
SPECIFIED = [name for name in list_profiles() if (p := load_profile(name).provenance) is not None
             and p.basis == "from specifications"]
STATED = [name for name in list_profiles() if load_profile(name).manybsp is not None and name not in SPECIFIED]
DERIVED = [name for name in list_profiles() if load_profile(name).manybsp is None]
# Every profile with its own [manybsp] section runs on every file; the derived ones take turns,
# DERIVED_PER_FILE a file, so each still meets a sixth of the files (samples and corpus) while the
# test costs about an eighth more CPU time than with the stated profiles only (all six on every
# file: about twice as much): the derived profiles run the same code and differ in numbers only.
# The specified ones take turns too, one a file.
DERIVED_PER_FILE = 1
# What no 001 profile gives (derive_manybsp marks it missing), supplied as a user would: 000's
# GTX 1070 launch overheads, so that the derived mem_lat, barrier table and μ are what is tested.
GIVEN = {"block_lnch_ovh": 358.0, "warp_lnch_ovh": 10.0}


def profiles_for(k: int) -> list[str]:
    """The profiles file number ``k`` runs on."""
    turn = [DERIVED[(k * DERIVED_PER_FILE + j) % len(DERIVED)] for j in range(DERIVED_PER_FILE)] if DERIVED else []
    if SPECIFIED:
        turn.append(SPECIFIED[k % len(SPECIFIED)])
    return STATED + sorted(set(turn))


def test_every_shipped_profile_is_covered():
    covered = {name for k in range(len(FILES)) for name in profiles_for(k)}
    assert covered == set(list_profiles()) and DERIVED


@pytest.mark.parametrize("k, path", [pytest.param(k, path, id=f"{path.parent.name}/{path.name}")
                                     for k, path in enumerate(FILES)])
def test_manybsp_is_positive_and_grows_with_the_grid(k, path):
    evaluator = Evaluator()
    module = load_ptx(path)
    for kernel in module.kernels:
        # Every profile predicts the same three launches of a kernel (one block, the first
        # profile's default grid, four times it): the launch-dependent analysis and the sampled
        # run are then made once per launch and shared by the profiles, which differ in numbers
        # only (a default grid sized by each profile's SM count cost a fresh analysis per profile:
        # two minutes for a Triton matmul)
        reference: Launch | None = None
        for profile in profiles_for(k):
            try:
                inputs = resolve_inputs(path, kernel=kernel.name, profile=profile, module=module, use_ptxas=False)
            except WarplineError:
                continue
            reference = reference or inputs.launch
            inputs = replace(inputs, launch=reference)
            derived = load_profile(profile).manybsp is None
            if derived:
                check_refusal(evaluator, inputs, (path.name, kernel.name, profile))
            small = replace(inputs.launch, grid=(1, 1, 1))
            big = replace(inputs.launch, grid=(max(1, inputs.launch.n_blocks) * 4, 1, 1))
            figures = []
            for launch in (small, inputs.launch, big):
                assert isinstance(launch, Launch)
                one = replace(inputs, launch=launch)
                state = state_for(one)
                if derived:
                    state = state.with_overrides(lambda ov: ov.params.update(GIVEN))
                ev = evaluator.evaluate(one, state, only=["manybsp"], trace=False)
                result = ev.models["manybsp"]
                if result.figures is None:
                    assert result.error and "\n" not in result.error, (path.name, kernel.name, profile)
                    # Given the launch overheads, a derived profile lacks nothing more.
                    assert "cannot be derived" not in result.error, (path.name, kernel.name, profile)
                    figures.append(None)
                    continue
                cycles = result.sm_cycles
                assert math.isfinite(cycles) and cycles > 0, (path.name, kernel.name, profile, launch.grid, cycles)
                figures.append(cycles)
            known = [f for f in figures if f is not None]
            assert known == sorted(known), (path.name, kernel.name, profile, figures)


def check_refusal(evaluator: Evaluator, inputs: KernelInputs, where: tuple) -> None:
    """Without the launch overheads a derived profile refuses the prediction in one line that
    names them, and still builds one BLOCK row per instruction and the supersteps."""
    ev = evaluator.evaluate(inputs, state_for(inputs), only=["manybsp"], trace=False)
    result = ev.models["manybsp"]
    if "Many-BSP" not in ev.errors or ev.manybsp is None:
        # Refused before Many-BSP (the block does not fit, the analysis failed): said in one line.
        assert result.figures is None and result.error and "\n" not in result.error, where
        return
    assert result.figures is None and "\n" not in result.error and "block_lnch_ovh" in result.error, where
    assert len(ev.manybsp.block) == len(inputs.function.instructions) > 0, where
    assert ev.manybsp.level1 and all(step.children for step in ev.manybsp.level1), where
