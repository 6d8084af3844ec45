"""Many-BSP never predicts nonsense: on the sample kernels and the Triton/numba corpus, with every
shipped profile that has Many-BSP figures, at one block and at the default launch, its cycles are
positive (or a one-line reason says why there are none) and do not shrink when the grid grows."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest

from engine.errors import WarplineError
from engine.evaluation import Evaluator, state_for
from engine.inputs import resolve_inputs
from engine.launch import Launch
from engine.profiles import list_profiles, load_profile
from engine.ptx import load_ptx

ROOT = Path(__file__).resolve().parents[1]
FILES = (sorted((ROOT / "samples" / "ptx").glob("*.sm_90.ptx"))
         + sorted((ROOT / "tests" / "corpus" / "triton").glob("*.ptx"))
         + sorted((ROOT / "tests" / "corpus" / "numba").glob("*.ptx"))[::4])
PROFILES = [name for name in list_profiles() if load_profile(name).manybsp is not None]


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_manybsp_is_positive_and_grows_with_the_grid(path):
    evaluator = Evaluator()
    module = load_ptx(path)
    for kernel in module.kernels:
        for profile in PROFILES:
            try:
                inputs = resolve_inputs(path, kernel=kernel.name, profile=profile, module=module, use_ptxas=False)
            except WarplineError:
                continue
            small = replace(inputs.launch, grid=(1, 1, 1))
            big = replace(inputs.launch, grid=(max(1, inputs.launch.n_blocks) * 4, 1, 1))
            figures = []
            for launch in (small, inputs.launch, big):
                assert isinstance(launch, Launch)
                one = replace(inputs, launch=launch)
                ev = evaluator.evaluate(one, state_for(one), only=["manybsp"], trace=False)
                result = ev.models["manybsp"]
                if result.figures is None:
                    assert result.error and "\n" not in result.error, (path.name, kernel.name, profile)
                    figures.append(None)
                    continue
                cycles = result.sm_cycles
                assert math.isfinite(cycles) and cycles > 0, (path.name, kernel.name, profile, launch.grid, cycles)
                figures.append(cycles)
            known = [f for f in figures if f is not None]
            assert known == sorted(known), (path.name, kernel.name, profile, figures)
