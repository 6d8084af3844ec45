"""The interpreter of sampled warps (engine.execution) computes what the GPU would.

Each kernel of tests/execution/kernels.cu is run on a few whole blocks and its stores compared
with the same computation in numpy, on the data the memory image defines (floats uniform in
[0, 1) from the address, integers from the launch's data patterns)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine.analysis import analyze_kernel
from engine.analysis.loaded_data import pointer_base
from engine.analysis.values import LaunchValues
from engine.execution import Budget, execute_launch
from engine.execution.machine import Machine, RunStopped
from engine.execution.sampling import choose_blocks
from engine.launch import Launch
from engine.ptx import load_ptx

PTX = Path(__file__).parent / "execution" / "kernels.sm_90.ptx"


@pytest.fixture(scope="module")
def module():
    return load_ptx(PTX)


def run(module, name: str, grid: int, block: int, args: dict, data: dict | None = None) -> Machine:
    function = next(f for f in module.functions if f.name == name)
    launch = Launch(grid=(grid, 1, 1), block=(block, 1, 1), args=args, data=data or {})
    analysis = analyze_kernel(function, launch, module)
    values = LaunchValues.from_launch(launch)
    blocks = [(b, 0, 0) for b in range(grid)]
    machine = Machine(function, module, analysis.cfg, values, blocks, 0, Budget())
    machine.run()
    return machine


def stored(machine: Machine, param: int, count: int, type_name: str, width: int = 4) -> np.ndarray:
    addr = np.uint64(pointer_base(param)) + np.arange(count, dtype=np.uint64) * np.uint64(width)
    bits, known = machine.image.load_global(addr, width, type_name)
    assert known.all(), f"{(~known).sum()} of {count} stored values are unknown"
    if type_name == "f32":
        return bits.astype(np.uint32).view(np.float32)
    return bits.astype(np.uint32).view(np.int32)


def inputs(machine: Machine, param: int, count: int, type_name: str = "f32", width: int = 4) -> np.ndarray:
    """What the image's default data gives the kernel at a buffer nobody stored to."""
    image = machine.image
    addr = np.uint64(pointer_base(param)) + np.arange(count, dtype=np.uint64) * np.uint64(width)
    bits, _ = image._default(param + 1, addr, width, type_name)
    return bits.astype(np.uint32).view(np.float32 if type_name == "f32" else np.int32)


def test_axpy_matches_numpy(module):
    m = run(module, "axpy", 3, 128, {"2": 2.5, "3": 300})
    x = inputs(m, 1, 384)
    y = inputs(m, 0, 384)
    got = stored(m, 0, 300, "f32")
    np.testing.assert_allclose(got, (np.float32(2.5) * x + y)[:300], rtol=1e-6)


def test_per_thread_loops_and_guard(module):
    m = run(module, "triangle", 2, 64, {"1": 100})
    got = stored(m, 0, 100, "s32")
    i = np.arange(100)
    want = np.array([sum(j * j + k for j in range(k % 64 % 7)) for k in i])
    np.testing.assert_array_equal(got, want)


def test_shared_memory_tree_with_barriers(module):
    m = run(module, "block_sum", 2, 256, {})
    x = inputs(m, 1, 512)
    got = stored(m, 0, 2, "f32")
    np.testing.assert_allclose(got, [x[:256].sum(), x[256:].sum()], rtol=1e-5)


def test_shuffles_sum_a_warp(module):
    m = run(module, "warp_sum", 1, 128, {})
    np.testing.assert_array_equal(stored(m, 0, 4, "s32"), [496] * 4)


def test_atomics_count_every_lane(module):
    m = run(module, "histogram", 4, 128, {"2": 500}, {"0": "constant:0", "1": "random:0:1000"})
    hist = stored(m, 0, 16, "s32")
    data = inputs(m, 1, 500, "s32")
    np.testing.assert_array_equal(hist, np.bincount(data & 15, minlength=16))


def test_data_dependent_while_loops(module):
    m = run(module, "collatz_steps", 1, 64, {"1": 64})

    def steps(v: int) -> int:
        n = 0
        while v != 1:
            v = 3 * v + 1 if v & 1 else v // 2
            n += 1
        return n
    np.testing.assert_array_equal(stored(m, 0, 64, "s32"), [steps(i + 1) for i in range(64)])


def test_local_arrays_per_thread(module):
    m = run(module, "local_sort4", 1, 32, {}, {"1": "random:0:100"})
    raw = inputs(m, 1, 128, "s32")
    got = stored(m, 0, 32, "s32")
    want = [sorted(raw[4 * i:4 * i + 4])[raw[4 * i] & 3] for i in range(32)]
    np.testing.assert_array_equal(got, want)


def test_a_serial_loop_in_one_thread_is_one_warp_path(module):
    function = next(f for f in module.functions if f.name == "serial_in_thread0")
    launch = Launch(grid=(4, 1, 1), block=(128, 1, 1), args={"1": 1000})
    analysis = analyze_kernel(function, launch, module)
    execution = execute_launch(analysis, launch, module)
    assert execution.ok, execution.stopped
    lengths = [len(p) for p in execution.paths[:4]]
    # warp 0 runs the loop (unrolled four times by nvcc: 250 passes); its block's other warps skip it
    assert lengths[0] > 200 and max(lengths[1:]) < 10
    m = run(module, "serial_in_thread0", 1, 128, {"1": 1000})
    np.testing.assert_array_equal(stored(m, 0, 128, "s32"), 499500 + np.arange(128))


def test_unknown_branch_stops_the_run(module):
    # n has no value: the guard i < n cannot be decided
    function = next(f for f in module.functions if f.name == "collatz_steps")
    launch = Launch(grid=(1, 1, 1), block=(32, 1, 1))
    analysis = analyze_kernel(function, launch, module)
    execution = execute_launch(analysis, launch, module)
    assert not execution.ok and "branch" in (execution.stopped or "")
    with pytest.raises(RunStopped):
        run(module, "collatz_steps", 1, 32, {})


def test_requests_count_sectors_and_lines(module):
    function = next(f for f in module.functions if f.name == "axpy")
    launch = Launch(grid=(64, 1, 1), block=(128, 1, 1), args={"2": 1.0, "3": 64 * 128})
    execution = execute_launch(analysis := analyze_kernel(function, launch, module), launch, module)
    assert execution.ok
    loads = [s for i, s in execution.access.items() if s.kind == "load"]
    assert loads and all(s.sectors / s.requests == 4 and s.lines / s.requests == 1 for s in loads)
    assert analysis.function.name == "axpy"


def test_sample_is_the_whole_grid_when_small_and_a_window_otherwise():
    small = choose_blocks((10, 1, 1), 64)
    assert small.whole and small.blocks == 10 and all(small.measured)
    big = choose_blocks((100, 100, 1), 64)
    assert not big.whole and big.blocks <= 64
    assert "before" in big.role and "window" in big.role
    window = [b for b, r in zip(big.linear, big.role, strict=True) if r == "window"]
    assert window == list(range(window[0], window[0] + len(window)))
    before = [b for b, r in zip(big.linear, big.role, strict=True) if r == "before"]
    assert [w - b for w, b in zip(window, before, strict=True)] == [100] * len(before)


@pytest.mark.parametrize("name, args, data", [
    ("axpy", {"2": 2.5, "3": 300}, {}),
    ("block_sum", {}, {}),
    ("local_sort4", {}, {"1": "random:0:100"}),
    ("triangle", {"1": 100}, {}),
])
def test_the_compiled_loads_and_stores_do_what_the_interpreted_ones_do(module, name, args, data) -> None:
    function = next(f for f in module.functions if f.name == name)
    launch = Launch(grid=(3, 1, 1), block=(128, 1, 1), args=args, data=data)
    analysis = analyze_kernel(function, launch, module)
    values = LaunchValues.from_launch(launch)
    runs = []
    for compiled in (True, False):
        machine = Machine(function, module, analysis.cfg, values, [(b, 0, 0) for b in range(3)], 0, Budget())
        machine.compiled_memory = compiled
        machine.run()
        runs.append(machine)
    fast, slow = runs
    np.testing.assert_array_equal(fast.regs, slow.regs)
    np.testing.assert_array_equal(fast.known, slow.known)
    np.testing.assert_array_equal(fast.recorder.counters, slow.recorder.counters)
    for key, value in slow.recorder.log.arrays().items():
        np.testing.assert_array_equal(fast.recorder.log.arrays()[key], value)
    assert fast.recorder.access.keys() == slow.recorder.access.keys()


def test_an_integer_read_of_a_float_buffer_moves_the_floats_bits(module):
    """Compilers copy float data through integer registers (a float4 staged in shared memory as
    ld.global.v4.u32 / st.shared.v4.u32): a 4-byte integer read of a buffer whose pattern is
    floats reads the same bits a float read there does; an 8-byte one stays unknown."""
    m = run(module, "axpy", 1, 32, {"2": 2.5, "3": 32}, data={"0": "uniform:-1.0:1.0"})
    addr = np.uint64(pointer_base(0)) + np.arange(4096, 4160, dtype=np.uint64) * np.uint64(4)   # never stored
    as_float, known_f = m.image.load_global(addr, 4, "f32")
    as_int, known_i = m.image.load_global(addr, 4, "u32")
    assert known_f.all() and known_i.all()
    assert np.array_equal(as_int, as_float)
    values = as_float.astype(np.uint32).view(np.float32)
    assert (values >= -1.0).all() and (values < 1.0).all() and values.std() > 0.3
    _, known_wide = m.image.load_global(addr[::2], 8, "u64")
    assert not known_wide.any()
