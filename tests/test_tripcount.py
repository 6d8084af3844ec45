"""Trip counts inferred from nvcc's loops and hand-written PTX; overrides; analyze_kernel."""

from __future__ import annotations

import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from engine.analysis import LaunchValues, analyze_kernel
from engine.analysis.cfg import build_cfg
from engine.analysis.defuse import build_def_use
from engine.analysis.tripcount import infer_trip_counts
from engine.ptx.parsed_module import Function

parse_ptx = pytest.importorskip("engine.ptx").parse_ptx

CUDA = r"""
extern "C" __global__ void simple(float *y, const float *x, int n) {
    float acc = 0.f;
    #pragma unroll 1
    for (int i = 0; i < n; i++) acc += x[i];
    y[threadIdx.x] = acc;
}
extern "C" __global__ void unrolled(float *y, const float *x, float a, int n) {
    float acc = 0.f;
    for (int i = 0; i < n; i++) acc += a * x[i];
    y[threadIdx.x] = acc;
}
extern "C" __global__ void mm(const float *A, const float *B, float *C, int width) {
    __shared__ float As[16][16]; __shared__ float Bs[16][16];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y*16+ty, col = blockIdx.x*16+tx;
    float s = 0;
    for (int t = 0; t < width/16; t++) {
        As[ty][tx] = A[row*width + t*16+tx];
        Bs[ty][tx] = B[(t*16+ty)*width + col];
        __syncthreads();
        for (int k = 0; k < 16; k++) s += As[ty][k]*Bs[k][tx];
        __syncthreads();
    }
    C[row*width+col] = s;
}
extern "C" __global__ void down(float *y, int n) {
    float acc = 1.f;
    #pragma unroll 1
    for (int i = n; i > 0; i -= 3) acc = acc * 1.5f + y[i];
    y[0] = acc;
}
extern "C" __global__ void nest(float *y, int n, int m) {
    float acc = 0;
    #pragma unroll 1
    for (int i = 0; i < n; i++) {
      #pragma unroll 1
      for (int j = 0; j < m; j++) acc += y[i*m+j];
    }
    y[threadIdx.x] = acc;
}
extern "C" __global__ void tidloop(float *y) {
    float acc = 0;
    #pragma unroll 1
    for (int i = 0; i < threadIdx.x; i++) acc += y[i];
    y[threadIdx.x] = acc;
}
extern "C" __global__ void blockdim(float *y) {
    float acc = 0;
    #pragma unroll 1
    for (int i = 0; i < blockDim.x * 2; i += 4) acc += y[i];
    y[threadIdx.x] = acc;
}
extern "C" __global__ void down_unrolled(float *y, int n) {
    float acc = 1.f;
    for (int i = n; i > 0; i -= 2) acc = acc * 1.5f + y[i];
    y[0] = acc;
}
extern "C" __global__ void sdk_mm(float *C, const float *A, const float *B, int wA, int wB) {
    __shared__ float As[16][16]; __shared__ float Bs[16][16];
    int a_first = wA * 16 * blockIdx.y, a_last = a_first + wA - 1;
    int b_first = 16 * blockIdx.x;
    float s = 0;
    for (int a = a_first, b = b_first; a <= a_last; a += 16, b += 16 * wB) {
        As[threadIdx.y][threadIdx.x] = A[a + wA * threadIdx.y + threadIdx.x];
        Bs[threadIdx.y][threadIdx.x] = B[b + wB * threadIdx.y + threadIdx.x];
        __syncthreads();
        for (int k = 0; k < 16; ++k) s += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    C[blockIdx.y * 16 * wB + threadIdx.y * wB + blockIdx.x * 16 + threadIdx.x] = s;
}
extern "C" __global__ void ptrloop(float *y, const float *a, int n) {
    float acc = 0;
    #pragma unroll 1
    for (const float *p = a; p < a + n; p += 2) acc += *p;
    y[threadIdx.x] = acc;
}
extern "C" __global__ void strided(float *y, int n) {
    float acc = 0;
    #pragma unroll 1
    for (int i = threadIdx.x; i < n; i += blockDim.x) acc += y[i];
    y[threadIdx.x] = acc;
}
extern "C" __global__ void early_break(float *y, int iters) {
    __shared__ float t[256];
    t[threadIdx.x] = y[threadIdx.x];
    for (int k = 0; k < iters; ++k) {
        __syncthreads();
        float v = t[(threadIdx.x + 1) % 256] * 0.5f;
        __syncthreads();
        if (k == iters - 1) break;
        t[threadIdx.x] = v;
    }
    y[threadIdx.x] = t[threadIdx.x];
}
"""


@dataclass
class FakeLaunch:
    """Duck-typed stand-in for engine.launch.Launch."""

    grid: tuple[int, int, int] = (1, 1, 1)
    block: tuple[int, int, int] = (32, 1, 1)
    args: dict = field(default_factory=dict)
    trip_overrides: dict = field(default_factory=dict)


@pytest.fixture(scope="module")
def module(tmp_path_factory: pytest.TempPathFactory):
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not installed")
    work: Path = tmp_path_factory.mktemp("trip")
    (work / "k.cu").write_text(CUDA)
    subprocess.run(["nvcc", "-ptx", "-arch=sm_90", "k.cu", "-o", "k.ptx"], cwd=work, check=True)
    return parse_ptx((work / "k.ptx").read_text(), "k.ptx")


def trips(function: Function, launch) -> list:
    """Trip counts in loop order (outermost first, then program order)."""
    a = analyze_kernel(function, launch)
    return [info.trip_count for info in a.loop_info]


@pytest.mark.parametrize("n", [1, 5, 1000])
def test_simple_loop_with_argument_bound(module, n: int) -> None:
    # ``n`` keyed by parameter index; the loop runs n times.
    (tc,) = trips(module.kernel("simple"), FakeLaunch(args={2: n}))
    assert (tc.value, tc.source) == (n, "inferred")
    assert "param2" in tc.expression


def test_argument_keyed_by_name_and_string_index(module) -> None:
    (tc,) = trips(module.kernel("simple"), LaunchValues(args={"simple_param_2": 7}))
    assert tc.value == 7
    (tc,) = trips(module.kernel("simple"), LaunchValues(args={"2": 9}))
    assert tc.value == 9


def test_zero_iterations_when_precheck_skips(module) -> None:
    (tc,) = trips(module.kernel("simple"), FakeLaunch(args={2: 0}))
    assert (tc.value, tc.source) == (0, "inferred")


def test_missing_argument_is_unknown_with_reason(module) -> None:
    (tc,) = trips(module.kernel("simple"), FakeLaunch())
    assert tc.value is None and tc.source == "unknown"
    assert "argument 2" in tc.reason


@pytest.mark.parametrize(("n", "main", "rest"), [(10, 2, 2), (3, 0, 3), (8, 2, 0), (4099, 1024, 3)])
def test_unrolled_loop_and_remainder(module, n: int, main: int, rest: int) -> None:
    # nvcc unrolls by 4: a main loop over n - n%4 elements and a remainder loop of n%4.
    counts = trips(module.kernel("unrolled"), FakeLaunch(args={3: n}))
    assert [c.value for c in counts] == [main, rest]


@pytest.mark.parametrize("width", [16, 64, 1024])
def test_tiled_mm_outer_loop(module, width: int) -> None:
    counts = trips(module.kernel("mm"), FakeLaunch(grid=(4, 4, 1), block=(16, 16, 1), args={3: width}))
    # the k loop is fully unrolled; the t loop runs width/16 times
    assert [c.value for c in counts] == [width // 16]


@pytest.mark.parametrize(("n", "expected"), [(1, 1), (3, 1), (4, 2), (10, 4), (0, 0), (-5, 0)])
def test_countdown_loop(module, n: int, expected: int) -> None:
    (tc,) = trips(module.kernel("down"), FakeLaunch(args={1: n}))
    assert tc.value == expected, tc.reason


def test_nested_loops(module) -> None:
    a = analyze_kernel(module.kernel("nest"), FakeLaunch(args={1: 6, 2: 11}))
    outer, inner = a.loop_info
    assert (outer.depth, inner.depth) == (1, 2)
    assert inner.parent == outer.key and outer.parent is None
    assert (outer.trip_count.value, inner.trip_count.value) == (6, 11)
    assert outer.first_instruction <= inner.first_instruction <= inner.last_instruction
    assert inner.last_instruction <= outer.last_instruction
    assert a.loop_key_of(inner.first_instruction) == inner.key
    assert a.loop_key_of(0) is None


def test_thread_dependent_bound_counts_the_last_lane_of_each_warp(module) -> None:
    # i < threadIdx.x: lane t runs t iterations; a warp runs until its last lane leaves
    (tc,) = trips(module.kernel("tidloop"), FakeLaunch())
    assert tc.value == 31 and tc.source == "inferred" and "per thread" in tc.reason
    (tc,) = trips(module.kernel("tidloop"), FakeLaunch(block=(64, 1, 1)))
    assert tc.value == 47           # warps 0 and 1: 31 and 63 iterations, mean 47
    # without a block shape the per-thread count cannot be taken
    (tc,) = trips(module.kernel("tidloop"), FakeLaunch(block=None))
    assert tc.value is None and "%tid.x" in tc.reason


def test_block_dimension_bound(module) -> None:
    (tc,) = trips(module.kernel("blockdim"), FakeLaunch(block=(128, 1, 1)))
    assert tc.value == 64  # i = 0, 4, ..., 252
    (tc,) = trips(module.kernel("blockdim"), LaunchValues())
    assert tc.value is None and "%ntid.x" in tc.reason


def test_override_wins(module) -> None:
    f = module.kernel("tidloop")
    key = analyze_kernel(f).loop_info[0].key
    (tc,) = trips(f, FakeLaunch(trip_overrides={key: 17}))
    assert (tc.value, tc.source) == (17, "override")
    g = module.kernel("simple")
    key = analyze_kernel(g).loop_info[0].key
    (tc,) = trips(g, FakeLaunch(args={2: 5}, trip_overrides={key: 3}))
    assert (tc.value, tc.source) == (3, "override") and "inferred: 5" in tc.reason


def kernel(body: str) -> Function:
    text = (".version 8.0\n.target sm_90\n.address_size 64\n"
            ".visible .entry k(.param .u32 n)\n{\n.reg .pred %p<9>;\n.reg .b32 %r<40>;\n.reg .b64 %rd<4>;\n"
            f"{body}\n}}\n")
    return parse_ptx(text, "test.ptx").kernel("k")


def counts_of(body: str, **args) -> dict:
    f = kernel(body)
    cfg = build_cfg(f)
    return infer_trip_counts(f, cfg, build_def_use(f, cfg), LaunchValues(args=args))


def test_top_tested_loop_counts_body_runs() -> None:
    tc = counts_of("""
    ld.param.u32 %r1, [n];
    mov.u32 %r2, 0;
HEAD:
    setp.ge.s32 %p1, %r2, %r1;
    @%p1 bra DONE;
    add.s32 %r2, %r2, 2;
    bra.uni HEAD;
DONE:
    ret;
""", n=7)["HEAD"]
    assert tc.value == 4  # r2 = 0, 2, 4, 6


def test_copy_through_mov_register_pair() -> None:
    # nvcc-style rotation: the increment lands in a new register, moved back before the branch.
    tc = counts_of("""
    ld.param.u32 %r1, [n];
    mov.u32 %r2, 3;
LOOP:
    add.s32 %r3, %r2, 1;
    mov.u32 %r2, %r3;
    setp.le.u32 %p1, %r3, %r1;
    @%p1 bra LOOP;
    ret;
""", n=10)["LOOP"]
    assert tc.value == 8  # r3 = 4..10 continue, the 8th pass (r3 = 11) leaves


def test_not_equal_that_never_hits_is_unknown() -> None:
    tc = counts_of("""
    mov.u32 %r2, 0;
LOOP:
    add.s32 %r2, %r2, 3;
    setp.ne.s32 %p1, %r2, 10;
    @%p1 bra LOOP;
    ret;
""")["LOOP"]
    assert tc.value is None and "never leaves" in tc.reason


def test_data_dependent_exit_is_unknown() -> None:
    tc = counts_of("""
    mov.u32 %r2, 0;
LOOP:
    ld.global.u32 %r3, [%r2];
    add.s32 %r2, %r2, 1;
    setp.ne.s32 %p1, %r3, 0;
    @%p1 bra LOOP;
    ret;
""")["LOOP"]
    assert tc.value is None and tc.source == "unknown"


def test_analysis_of_5000_instructions_is_fast() -> None:
    lines = ["ld.param.u32 %r1, [n];", "mov.u32 %r2, 0;", "LOOP:"]
    lines += [f"add.s32 %r{3 + i % 30}, %r{3 + (i + 5) % 30}, {i};" for i in range(5000)]
    lines += ["add.s32 %r2, %r2, 1;", "setp.lt.s32 %p1, %r2, %r1;", "@%p1 bra LOOP;", "ret;"]
    f = kernel("\n".join(lines))
    start = time.process_time()  # CPU time: other test processes may share the machine
    a = analyze_kernel(f, LaunchValues(args={0: 12}))
    assert time.process_time() - start < 0.5
    assert a.trip_counts["LOOP"].value == 12 and len(a.classifications) == 5006


@pytest.mark.parametrize("n", [0, 1, 2, 5, 9, 10, 17, 100, 1001])
def test_unrolled_countdown_uses_the_first_loops_exit_value(module, n: int) -> None:
    # nvcc peels n%4-ish iterations into a first loop; the unrolled loop's counter starts from
    # the first loop's final induction value.
    prologue, main = trips(module.kernel("down_unrolled"), FakeLaunch(args={1: n}))
    assert prologue.known and main.known, main.reason
    assert prologue.value + 4 * main.value == len(range(n, 0, -2))


@pytest.mark.parametrize(("wa", "expected"), [(16, 1), (320, 20), (1024, 64)])
def test_block_dependent_bounds_with_uniform_distance(module, wa: int, expected: int) -> None:
    # a runs from wA*16*blockIdx.y to a_first + wA - 1: neither end is uniform, the distance is.
    (tc,) = trips(module.kernel("sdk_mm"), FakeLaunch(grid=(8, 8, 1), block=(16, 16, 1),
                                                      args={3: wa, 4: 64}))
    assert tc.value == expected, tc.reason
    assert "%ctaid.y" in tc.expression


@pytest.mark.parametrize("iters", [1, 2, 7])
def test_loop_with_break_takes_the_first_exit(module, iters: int) -> None:
    (tc,) = trips(module.kernel("early_break"), FakeLaunch(block=(256, 1, 1), args={1: iters}))
    assert tc.value == iters, tc.reason


def test_loop_left_by_thread_dependent_break_is_unknown() -> None:
    tc = counts_of("""
    ld.param.u32 %r1, [n];
    mov.u32 %r2, 0;
    mov.u32 %r5, %tid.x;
LOOP:
    setp.eq.s32 %p2, %r2, %r5;
    @%p2 bra DONE;
    add.s32 %r2, %r2, 1;
    setp.lt.s32 %p1, %r2, %r1;
    @%p1 bra LOOP;
DONE:
    ret;
""", n=10)["LOOP"]
    assert tc.value is None and "%tid.x" in tc.reason


def test_long_dependence_chain_does_not_exhaust_recursion() -> None:
    # The bound is the end of a 3000-instruction chain: deep, but must not crash the analysis.
    lines = ["ld.param.u32 %r1, [n];"] + ["add.s32 %r1, %r1, 1;"] * 3000
    lines += ["mov.u32 %r2, 0;", "LOOP:", "add.s32 %r2, %r2, 1;", "setp.lt.s32 %p1, %r2, %r1;",
              "@%p1 bra LOOP;", "ret;"]
    tc = analyze_kernel(kernel("\n".join(lines)), LaunchValues(args={0: 5})).trip_counts["LOOP"]
    assert tc.value is None and "too long" in tc.reason


def test_uniform_evaluator_semantics() -> None:
    from engine.analysis.values import UniformEvaluator

    f = kernel("""
    ld.param.u32 %r1, [n];                       // 0
    setp.gt.s32 %p1, %r1, 3;                     // 1
    setp.lt.and.s32 %p2, %r1, 10, %p1;           // 2: (n < 10) and (n > 3)
    selp.b32 %r2, 7, 9, %p2;                     // 3
    shr.u32 %r3, -8, 1;                          // 4: logical on the 32-bit pattern
    shr.s32 %r4, -8, 1;                          // 5: arithmetic
    mov.u32 %r5, %ntid.y;                        // 6
    mul.wide.u32 %rd1, %r5, 1073741824;          // 7: 64-bit product, no 32-bit wrap
    mov.u32 %r6, %tid.x;                         // 8
    add.s32 %r7, %r6, %r1;                       // 9: linear in %tid.x
    ret;                                         // 10
""")
    cfg = build_cfg(f)
    du = build_def_use(f, cfg)

    def at_end(n: int, reg: str):
        return UniformEvaluator(f, du, LaunchValues(args={0: n}, block=(32, 8, 1))).register(reg, 10)

    assert at_end(5, "%r2").value == 7 and at_end(2, "%r2").value == 9 and at_end(12, "%r2").value == 9
    assert at_end(5, "%r3").value == 0x7FFFFFFC and at_end(5, "%r4").value == -4
    assert at_end(5, "%rd1").value == 8 << 30
    v = at_end(5, "%r7")
    assert not v.known and v.linear == (5, {"%tid.x": 1}) and "%tid.x" in v.reason


def test_sample_launch_files_drive_the_analysis() -> None:
    # The real Launch objects of the shipped samples: the Many-BSP mm case has 320/32 = 10 trips.
    launch_mod = pytest.importorskip("engine.launch")
    root = Path(__file__).resolve().parent.parent / "samples"
    if not (root / "mm.launch.toml").exists():
        pytest.skip("samples not present")
    from engine.ptx import load_ptx

    lf = launch_mod.load_launch_file(root / "mm.launch.toml")
    case = lf.get("case")
    module = load_ptx(lf.ptx)  # resolved against the launch file's folder
    a = analyze_kernel(module.kernel(case.kernel), case, module)
    assert [info.trip_count.value for info in a.loop_info] == [10]
    # HotSpot's time loop leaves through `if (k == iteration - 1) break;` (two exits).
    lf = launch_mod.load_launch_file(root / "hotspot.launch.toml")
    case = lf.get("case")
    a = analyze_kernel(load_ptx(lf.ptx).kernel(case.kernel), case)
    assert [info.trip_count.value for info in a.loop_info] == [case.args[0]]
    for path in sorted(root.glob("*.launch.toml")):
        lf = launch_mod.load_launch_file(path)
        module = load_ptx(lf.ptx)
        for launch in lf.launches:
            result = analyze_kernel(module.kernel(launch.kernel), launch, module)
            for info in result.loop_info:  # every loop gets a number or a reason
                assert info.trip_count.known or info.trip_count.reason


@pytest.mark.parametrize("n", [0, 1, 2, 9, 10])
def test_pointer_induction_without_pointer_values(module, n: int) -> None:
    # p runs from a to a + n with a unknown: the pre-check and the exit test compare pointers
    # with the same unknown base, so both are decided by n alone.
    (tc,) = trips(module.kernel("ptrloop"), FakeLaunch(args={2: n}))
    assert tc.value == len(range(0, n, 2)), tc.reason


def test_block_stride_loop_is_counted_per_thread(module) -> None:
    (tc,) = trips(module.kernel("strided"), FakeLaunch(block=(128, 1, 1), args={1: 4096}))
    assert tc.value == 32 and "per thread" in tc.reason      # 4096 / 128
    (tc,) = trips(module.kernel("strided"), FakeLaunch(block=(128, 1, 1), args={1: 4000}))
    # 4000 = 31·128 + 32: warp 0 runs 32 iterations, warps 1-3 run 31; their mean rounds to 31
    assert tc.value == 31


def test_remainder_of_a_thread_index_is_evaluated_lane_by_lane() -> None:
    """The main loop of ``for (j = 0; j <= i; ++j)`` unrolled by 4, as nvcc writes it: the
    counter starts at i - ((i + 1) & 3) and counts down by 4 to -1. Not linear in the thread
    index, yet every lane's count follows from it; lanes with i < 3 never enter (guarded)."""
    body = """
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mad.lo.s32 %r4, %r2, %r3, %r1;
    setp.lt.u32 %p3, %r4, 3;
    @%p3 bra DONE;
    add.s32 %r16, %r4, 1;
    and.b32 %r21, %r16, 3;
    sub.s32 %r18, %r4, %r21;
HEAD:
    add.s32 %r18, %r18, -4;
    setp.ne.s32 %p4, %r18, -1;
    @%p4 bra HEAD;
DONE:
    ret;
"""
    f = kernel(body)
    cfg = build_cfg(f)
    launch = FakeLaunch(grid=(4, 1, 1), block=(32, 1, 1))
    tc = infer_trip_counts(f, cfg, build_def_use(f, cfg), LaunchValues.from_launch(launch))["HEAD"]
    # thread i runs (i + 1) // 4 passes; a warp runs its last lane's: warp w (i = 32w + 31) 8w + 8
    assert tc.value == round((8 + 16 + 24 + 32) / 4) and "lane by lane" in tc.reason
    assert tc.slowest == 32


def test_mean_and_slowest_of_a_per_thread_count(module) -> None:
    (tc,) = trips(module.kernel("tidloop"), FakeLaunch(block=(64, 1, 1)))
    assert (tc.value, tc.slowest) == (47, 63)
