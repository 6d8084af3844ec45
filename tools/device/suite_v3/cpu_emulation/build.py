"""Build suite v3's CUDA kernels for the CPU, to check their logic without a GPU.

    python3 tools/device/suite_v3/cpu_emulation/build.py [family ...]     # into build/cpu_emulation/
    WARPLINE_CPU_EMULATION=build/cpu_emulation PYTHONPATH=tools/device/suite_v3/cpu_emulation \\
        python3 tools/device/suite_v3/check_kernels.py --only gemm stencil ...

Each ``samples/v3/<family>.cu`` is compiled with g++ (C++20) against ``cuda_on_cpu.h``: one
std::thread per CUDA thread, the blocks of a grid one after another, ``__syncthreads`` as a
barrier, warp shuffles and ballots through a per-warp exchange, atomics under a mutex, texture
fetches from linear memory. ``extern __shared__`` arrays become the launch's dynamic shared memory.
The ``cupy`` package beside this file stands in for CuPy in check_kernels.py and runs the kernels
from the built libraries, so the same checks and references run on the CPU.

What it cannot run: tensor-core and asynchronous-copy code (wmma, mma.sync, ldmatrix, cp.async:
family tcgemm) and Triton's PTX; those are checked on the GPU only. It tests what the kernels
compute, not timing or memory-model races that real hardware would expose.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[3]
V3 = ROOT / "samples" / "v3"
FAMILIES = ["gemm", "gemv", "stencil", "dynprog", "elim", "trisolve", "kmeans", "image", "graph", "scansort",
            "particles", "mesh", "ml"]

WRAPPER = '''#include "cuda_on_cpu.h"
#include <type_traits>
#include <utility>
{source}
template <class... A, size_t... I>
void call_impl(void (*k)(A...), dim3e g, dim3e b, size_t s, void **args, std::index_sequence<I...>)
{{
    emu_launch<A...>(k, g, b, s, *reinterpret_cast<A *>(args[I])...);
}}
template <class... A> void call(void (*k)(A...), dim3e g, dim3e b, size_t s, void **args)
{{
    call_impl(k, g, b, s, args, std::index_sequence_for<A...>{{}});
}}
extern "C" int emu_run(const char *name, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                       unsigned bz, size_t smem, void **args)
{{
    dim3e g{{gx, gy, gz}}, b{{bx, by, bz}};
{kernels}
    return 1;
}}
extern "C" void *emu_global(const char *name)
{{
{constants}
    return nullptr;
}}
'''


def translate(source: str) -> str:
    """The C++ the harness compiles: dynamic shared arrays point into the launch's buffer."""
    source = re.sub(r"extern __shared__ (?:__align__\(\d+\) )?([\w ]+?) (\w+)\[\];",
                    r"\1 *\2 = reinterpret_cast<\1 *>(g_dyn_smem);", source)
    source = re.sub(r"#include <cuda[^>]*>", "", source)
    kernels = re.findall(r"__global__ void (?:__launch_bounds__\(\d+\) )?(\w+)\(", source)
    constants = re.findall(r"__constant__ \w+ (\w+)\[", source)
    return WRAPPER.format(
        source=source,
        kernels="\n".join(f'    if (!std::strcmp(name, "{k}")) {{ call({k}, g, b, smem, args); return 0; }}'
                          for k in kernels),
        constants="\n".join(f'    if (!std::strcmp(name, "{c}")) return (void *){c};' for c in constants))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("families", nargs="*", help=f"default: {' '.join(FAMILIES)}")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "cpu_emulation")
    ns = parser.parse_args()
    ns.out.mkdir(parents=True, exist_ok=True)
    bad = 0
    for family in ns.families or FAMILIES:
        cpp = ns.out / f"{family}.cpp"
        cpp.write_text(translate((V3 / f"{family}.cu").read_text()))
        cmd = ["g++", "-std=c++20", "-O1", "-shared", "-fPIC", "-pthread", "-w", f"-I{HERE}", str(cpp), "-o",
               str(ns.out / f"lib{family}.so")]
        run = subprocess.run(cmd, capture_output=True, text=True)
        print(f"{family}: {'built' if run.returncode == 0 else 'FAILED'}")
        if run.returncode:
            print(run.stderr[-3000:])
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
