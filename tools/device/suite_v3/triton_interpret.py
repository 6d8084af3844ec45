"""Check suite v3's Triton kernels on the CPU with Triton's interpreter (TRITON_INTERPRET=1), against
the same NumPy references and tolerances as check_kernels.py uses on the GPU.

    .venv-triton/bin/python tools/device/suite_v3/triton_interpret.py

Needs, in the Triton environment, PyTorch for the CPU and NumPy below 2.3 (Triton 3.6's
interpreter turns one-element arrays into Python integers, which newer NumPy refuses). It runs the
Python sources, not the compiled PTX: it checks what the kernels compute; check_kernels.py checks
the PTX on the GPU.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ["TRITON_INTERPRET"] = "1"   # before triton is imported

import numpy as np  # noqa: E402
import torch  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import check_kernels as ck  # noqa: E402
from gen_triton import _load  # noqa: E402


def _t(a: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(a))


def main() -> int:
    results = []
    matmul = _load("tt_matmul")[0].matmul_kernel
    for bm, bn, bk in ((128, 128, 64), (64, 64, 32)):
        m, n, k = 256, 384, 192
        A, B = ck._half_gemm_data(m, n, k, 46)
        C = torch.zeros((m, n), dtype=torch.float16)
        matmul[(n // bn, m // bm)](_t(A), _t(B), C, m, n, k, BM=bm, BN=bn, BK=bk)
        results.append((f"matmul {bm}x{bn}", ck.close(C.numpy(), A.astype(np.float64) @ B.astype(np.float64), 2e-3)))
    softmax = _load("tt_softmax")[0].softmax_kernel
    x = ck.rng(47).uniform(-4, 4, (5, 2000)).astype(np.float16)
    y = torch.zeros((5, 2000), dtype=torch.float16)
    softmax[(5,)](_t(x), y, 2000, CHUNK=1024)
    results.append(("softmax", ck.close(y.numpy(), ck._softmax(x.astype(np.float64)), 2e-3)))
    layernorm = _load("tt_layernorm")[0].layernorm_kernel
    r = ck.rng(48)
    x = r.uniform(-4, 4, (5, 3000)).astype(np.float16)
    w, b = r.uniform(0.5, 1.5, 3000).astype(np.float16), r.uniform(-0.5, 0.5, 3000).astype(np.float16)
    y = torch.zeros((5, 3000), dtype=torch.float16)
    layernorm[(5,)](_t(x), _t(w), _t(b), y, 3000, 1e-5, CHUNK=1024)
    xd = x.astype(np.float64)
    ref = (xd - xd.mean(axis=1, keepdims=True)) / np.sqrt(xd.var(axis=1, keepdims=True) + 1e-5) * w + b
    results.append(("layernorm", ck.close(y.numpy(), ref, 5e-3)))
    attention = _load("tt_attention")[0].attention_kernel
    for causal in (True, False):
        r = ck.rng(49)
        q, k_, v = (r.uniform(-1, 1, (2, 256, 64)).astype(np.float16) for _ in range(3))
        o = torch.zeros((2, 256, 64), dtype=torch.float16)
        attention[(2, 2)](_t(q), _t(k_), _t(v), o, 256, 0.125, HEAD=64, BM=128, BN=64, CAUSAL=causal)
        results.append((f"attention causal={causal}", ck.close(o.numpy(), ck._attention_ref(q, k_, v, 0.125, causal),
                                                                 5e-3)))
    for name, (ok, detail) in results:
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {detail}")
    return 0 if all(ok for _, (ok, _) in results) else 1


if __name__ == "__main__":
    sys.exit(main())
