#!/usr/bin/env python3
"""Regenerate the PTX parser test corpus in tests/corpus/ from tools/corpus_src/.

Usage (from the repository root, with the generator environment):

    python3 -m venv .venv-gen
    .venv-gen/bin/pip install "numba-cuda[cu13]" triton nvidia-cuda-nvrtc-cu12
    .venv-gen/bin/python tools/gen_corpus.py                 # every front end
    .venv-gen/bin/python tools/gen_corpus.py nvcc nvrtc      # only some of them
    .venv-gen/bin/python tools/gen_corpus.py --check         # also assemble each file with ptxas

Front ends and what they need (no GPU is needed for any of them):
  nvcc    nvcc on PATH (CUDA 12/13); tools/corpus_src/nvcc/*.cu for sm_75/80/86/90,
          plus -lineinfo (sm_90) and -G (sm_80) variants; control.cu and memory.cu also
          for sm_100 and sm_120.
  nvrtc   NVRTC 12.x from the nvidia-cuda-nvrtc-cu12 wheel (driven through ctypes);
          tools/corpus_src/nvrtc/*.cu for compute_52/61/75/89, plus -lineinfo and -G variants.
  numba   numba-cuda compile_ptx; tools/corpus_src/numba/numba_kernels.py at cc 7.5/8.0/9.0,
          and at cc 5.2/6.1 when a second environment .venv-gen12 (or GEN12_PY) with
          "numba-cuda[cu12]" exists (the cu13 NVVM cannot target them).
  triton  Triton AOT compile (ASTSource + GPUTarget); tools/corpus_src/triton/triton_kernels.py
          at cc 80/90 (and 75 for the kernels without tl.dot). cc 90 matmul uses wgmma.

Each front end's folder is emptied of *.ptx before it is regenerated, and
tests/corpus/README.md is rewritten with the list of files.  Absolute paths of
this checkout are rewritten to repository-relative ones so that the output does
not depend on where the repository lives.  Takes about a minute; not run by CI.
"""
from __future__ import annotations

import argparse
import ctypes
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "tools", "corpus_src")
OUT = os.path.join(ROOT, "tests", "corpus")
MAX_BYTES = 1_500_000          # skip anything bigger than this (keeps the corpus small)

# (file name, front end, source, how it was made, size) for the README
_made: list[tuple[str, str, str, str, int]] = []


def _rel(path: str) -> str:
    return os.path.relpath(path, ROOT)


def _write(frontend: str, name: str, text: str, source: str, how: str) -> None:
    text = text.replace(ROOT + "/", "").replace(ROOT, ".")
    data = text.encode()
    if len(data) > MAX_BYTES:
        print(f"  skip {frontend}/{name}: {len(data)} bytes", file=sys.stderr)
        return
    with open(os.path.join(OUT, frontend, name), "wb") as fh:
        fh.write(data)
    _made.append((f"{frontend}/{name}", frontend, source, how, len(data)))
    print(f"  {frontend}/{name} ({len(data)} bytes)")


def _fresh(frontend: str) -> None:
    d = os.path.join(OUT, frontend)
    os.makedirs(d, exist_ok=True)
    for f in glob.glob(os.path.join(d, "*.ptx")):
        os.remove(f)


# --------------------------------------------------------------------------- nvcc
NVCC_VARIANTS = [
    # (suffix, arch, extra options)
    ("sm_75", "sm_75", []),
    ("sm_80", "sm_80", []),
    ("sm_86", "sm_86", []),
    ("sm_90", "sm_90", []),
    ("sm_90.lineinfo", "sm_90", ["-lineinfo"]),
    ("sm_80.G", "sm_80", ["-G"]),
]
# Newer architectures, for fewer sources: enough to pick a profile by target (sm_100, sm_120).
NVCC_NEW_VARIANTS = [("sm_100", "sm_100", []), ("sm_120", "sm_120", [])]
NVCC_NEW_SOURCES = ("control", "memory")


def gen_nvcc() -> None:
    _fresh("nvcc")
    nvcc = shutil.which("nvcc")
    if not nvcc:
        raise SystemExit("nvcc not found on PATH")
    for src in sorted(glob.glob(os.path.join(SRC, "nvcc", "*.cu"))):
        stem = os.path.splitext(os.path.basename(src))[0]
        variants = NVCC_VARIANTS + (NVCC_NEW_VARIANTS if stem in NVCC_NEW_SOURCES else [])
        for suffix, arch, extra in variants:
            with tempfile.TemporaryDirectory() as tmp:
                out = os.path.join(tmp, "k.ptx")
                cmd = [nvcc, "-ptx", f"-arch={arch}", "-std=c++17", *extra, _rel(src), "-o", out]
                subprocess.run(cmd, cwd=ROOT, check=True)
                text = open(out).read()
            how = " ".join(["nvcc", "-ptx", f"-arch={arch}", "-std=c++17", *extra])
            _write("nvcc", f"{stem}.{suffix}.ptx", text, _rel(src), how)


# --------------------------------------------------------------------------- nvrtc
NVRTC_VARIANTS = [
    ("compute_52", ["--gpu-architecture=compute_52"]),
    ("compute_61", ["--gpu-architecture=compute_61"]),
    ("compute_75", ["--gpu-architecture=compute_75"]),
    ("compute_89", ["--gpu-architecture=compute_89"]),
]
NVRTC_EXTRA = {
    # stem -> extra (suffix, options) variants
    "nbody": [("compute_90.lineinfo", ["--gpu-architecture=compute_90", "-lineinfo"])],
    "spmv": [("compute_61.G", ["--gpu-architecture=compute_61", "-G"])],
    "scan": [("compute_52.lineinfo", ["--gpu-architecture=compute_52", "-lineinfo"])],
}
# template kernels need name expressions so NVRTC instantiates and keeps them
NVRTC_NAMES = {
    "bitonic": ["bitonic_segment_sort<int, 1024>", "bitonic_segment_sort<float, 512>"],
}


def _nvrtc_lib() -> ctypes.CDLL:
    import nvidia.cuda_nvrtc  # the nvidia-cuda-nvrtc-cu12 wheel

    base = list(nvidia.cuda_nvrtc.__path__)[0]
    hits = glob.glob(os.path.join(base, "lib", "libnvrtc.so.12"))
    if not hits:
        raise SystemExit("libnvrtc.so.12 not found (pip install nvidia-cuda-nvrtc-cu12)")
    return ctypes.CDLL(hits[0])


def _nvrtc_compile(lib: ctypes.CDLL, text: str, name: str, opts: list[str],
                   names: list[str]) -> str:
    prog = ctypes.c_void_p()
    if lib.nvrtcCreateProgram(ctypes.byref(prog), text.encode(), name.encode(), 0, None, None):
        raise RuntimeError("nvrtcCreateProgram failed")
    try:
        for n in names:
            lib.nvrtcAddNameExpression(prog, n.encode())
        arr = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
        rc = lib.nvrtcCompileProgram(prog, len(opts), arr)
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetProgramLog(prog, log)
        if rc:
            raise RuntimeError(f"NVRTC failed on {name} {opts}:\n{log.value.decode()}")
        lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetPTX(prog, buf)
        return buf.value.decode()
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))


def gen_nvrtc() -> None:
    _fresh("nvrtc")
    lib = _nvrtc_lib()
    major, minor = ctypes.c_int(), ctypes.c_int()
    lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    for src in sorted(glob.glob(os.path.join(SRC, "nvrtc", "*.cu"))):
        stem = os.path.splitext(os.path.basename(src))[0]
        text = open(src).read()
        for suffix, opts in NVRTC_VARIANTS + NVRTC_EXTRA.get(stem, []):
            ptx = _nvrtc_compile(lib, text, _rel(src), opts, NVRTC_NAMES.get(stem, []))
            how = f"NVRTC {major.value}.{minor.value} " + " ".join(opts)
            _write("nvrtc", f"{stem}.{suffix}.ptx", ptx, _rel(src), how)


# --------------------------------------------------------------------------- numba
NUMBA_CCS = [(7, 5), (8, 0), (9, 0)]
# cc 5.2 / 6.1 need numba-cuda[cu12] (CUDA 12 NVVM); built in that environment when present
NUMBA_OLD_CCS = [(5, 2), (6, 1)]
GEN12_PY = os.environ.get("GEN12_PY", os.path.join(ROOT, ".venv-gen12", "bin", "python"))


def gen_numba() -> None:
    _fresh("numba")
    _numba_ccs(NUMBA_CCS)
    if os.path.exists(GEN12_PY):
        with tempfile.TemporaryDirectory() as tmp:
            made = os.path.join(tmp, "made.json")
            subprocess.run([GEN12_PY, os.path.abspath(__file__), "--numba-old-worker", made],
                           check=True)
            import json

            _made.extend(tuple(r) for r in json.load(open(made)))
    else:
        print(f"  ({GEN12_PY} missing: numba cc 5.2/6.1 skipped)", file=sys.stderr)


def _numba_ccs(ccs) -> None:
    sys.path.insert(0, os.path.join(SRC, "numba"))
    import numba
    import numba_kernels
    from numba import cuda

    src = _rel(numba_kernels.__file__)
    version = getattr(numba_kernels.cuda, "__version__", None) or _dist_version("numba-cuda")
    for name, (fn, sig, device) in numba_kernels.KERNELS.items():
        for cc in ccs:
            lineinfo = name in ("axpy", "black_scholes") and cc == (9, 0)
            ptx, _ = cuda.compile_ptx(fn, sig, device=device, cc=cc, lineinfo=lineinfo)
            suffix = f"cc{cc[0]}{cc[1]}" + (".lineinfo" if lineinfo else "")
            how = (f"numba {numba.__version__} / numba-cuda {version} compile_ptx("
                   f"{sig!r}, cc={cc}{', device=True' if device else ''}"
                   f"{', lineinfo=True' if lineinfo else ''})")
            _write("numba", f"{name}.{suffix}.ptx", ptx, src, how)


def _dist_version(dist: str) -> str:
    from importlib.metadata import version

    try:
        return version(dist)
    except Exception:
        return "?"


# --------------------------------------------------------------------------- triton
TRITON_CCS = {
    "vector_add": [75, 80, 90],
    "softmax": [75, 80, 90],
    "layer_norm": [75, 80, 90],
    "matmul": [80, 90],          # the cc 75 build (no tensor-core dot) is ~0.6 MB: skipped
}


def gen_triton() -> None:
    _fresh("triton")
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    cache = tempfile.mkdtemp(prefix="warpline-triton-")
    os.environ["TRITON_CACHE_DIR"] = cache
    try:
        sys.path.insert(0, os.path.join(SRC, "triton"))
        import triton
        import triton_kernels
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource

        src = _rel(triton_kernels.__file__)
        for name, (fn, sig, constexprs) in triton_kernels.KERNELS.items():
            for cc in TRITON_CCS[name]:
                k = triton.compile(ASTSource(fn, signature=sig, constexprs=constexprs),
                                   target=GPUTarget("cuda", cc, 32))
                how = (f"triton {triton.__version__} compile(ASTSource(constexprs={constexprs}), "
                       f"GPUTarget('cuda', {cc}, 32)); num_warps={k.metadata.num_warps}, "
                       f"shared={k.metadata.shared}")
                _write("triton", f"{name}.cc{cc}.ptx", k.asm["ptx"], src, how)
    finally:
        shutil.rmtree(cache, ignore_errors=True)


# --------------------------------------------------------------------------- check / README
def _ptx_header(path: str) -> tuple[tuple[int, int], int | None]:
    version, target = (0, 0), None
    with open(path) as fh:
        for line in fh:
            m = re.match(r"\s*\.version\s+(\d+)\.(\d+)", line)
            if m:
                version = (int(m.group(1)), int(m.group(2)))
            m = re.match(r"\s*\.target\s+sm_(\d+)", line)
            if m:
                target = int(m.group(1))
                break
    return version, target


def check_all() -> int:
    """Assemble every file whose target is sm_75+ with ptxas: the one on PATH and the ones
    bundled with Triton are tried in turn; a file none of them can read (its .version is
    newer than all of them) is reported as skipped, not failed."""
    exes = [e for e in [shutil.which("ptxas")] if e]
    try:
        import triton

        exes += sorted(glob.glob(os.path.join(os.path.dirname(triton.__file__), "backends",
                                              "nvidia", "bin", "ptxas*")))
    except Exception:
        pass
    bad = skipped = ok = 0
    for path in sorted(glob.glob(os.path.join(OUT, "*", "*.ptx"))):
        rel = os.path.relpath(path, OUT)
        _version, target = _ptx_header(path)
        if target is None or target < 75:
            skipped += 1
            continue
        head = open(path).read(4000)
        arch = f"sm_{target}a" if re.search(rf"\.target\s+sm_{target}a", head) else f"sm_{target}"
        errors = []
        for exe in exes:
            r = subprocess.run([exe, f"-arch={arch}", path, "-o", os.devnull],
                               capture_output=True, text=True)
            if r.returncode == 0:
                ok += 1
                break
            errors.append(r.stderr)
        else:
            if errors and all("Unsupported .version" in e for e in errors):
                skipped += 1
            else:
                bad += 1
                print(f"ptxas FAILED on {rel}:\n{errors[-1] if errors else 'no ptxas'}",
                      file=sys.stderr)
    print(f"check: {ok} assembled, {skipped} skipped (old target or too new .version), "
          f"{bad} failed")
    return bad


README_HEAD = """# PTX parser test corpus

Real compiler output for `engine.ptx` tests: every file here was produced by
`tools/gen_corpus.py` from kernels written for this project in `tools/corpus_src/`
(nothing is hand-edited except that absolute paths of the generating checkout are
made repository-relative).  Regenerate with

    .venv-gen/bin/python tools/gen_corpus.py [nvcc] [nvrtc] [numba] [triton] [--check]

Front ends:
- `nvcc/`: nvcc {nvcc} `-ptx` for sm_75/80/86/90, a `-lineinfo` build (sm_90) and a `-G`
  debug build (sm_80, DWARF `.section`s) of each of `tools/corpus_src/nvcc/*.cu`, and sm_100
  and sm_120 builds of `control.cu` and `memory.cu`.  Covers
  `__noinline__` device functions (`.func`/`call`, struct returns), recursion, `printf`
  (`vprintf`), `assert` (`__assertfail`), `__trap`, templates, `__launch_bounds__`
  (`.maxntid`/`.minnctapersm`), warp shuffles with `a|b` destinations, votes/match/redux,
  atomics (shared/global, CAS loops, 64-bit), `float4`/`double2` vectors, `__ldg`, dynamic
  `extern __shared__`, `__constant__`, local arrays, `cp.async` (sm_80+), texture and surface
  objects (`tex`, `suld`, `sust`), cooperative groups (grid sync), double/half/bf16 math,
  `wmma` (`mma`) and switch/goto/early-exit control flow.
- `nvrtc/`: NVRTC 12.x (PyPI `nvidia-cuda-nvrtc-cu12`) for compute_52/61/75/89 (older
  targets than nvcc 13 supports), plus `-lineinfo` and `-G` variants; `extern "C"` and
  templated (name-expression) kernels, inline PTX `asm`.
- `numba/`: numba-cuda `compile_ptx` at cc 7.5/8.0/9.0 (CUDA 13 NVVM, `.version 9.5`) and
  cc 5.2/6.1 (numba-cuda[cu12], CUDA 12 NVVM); one device function compiled with
  `device=True` (a `.visible .func` only), two `lineinfo=True` builds.
- `triton/`: Triton ahead-of-time compile (`.version` 9.x, `.target sm_90a` at cc 90 with
  `wgmma`, `mma.sync` + `ldmatrix`/`cp.async` at cc 80).

## Files

| file | bytes | source | made with |
|---|---:|---|---|
"""


def write_readme() -> None:
    rows = {}
    old = os.path.join(OUT, "README.md")
    if os.path.exists(old):   # keep rows of front ends not regenerated this time
        for line in open(old):
            m = re.match(r"\| `([^`]+)` \| (\d+) \| `([^`]*)` \| (.*) \|$", line.rstrip("\n"))
            if m and os.path.exists(os.path.join(OUT, m.group(1))):
                rows[m.group(1)] = (m.group(2), m.group(3), m.group(4))
    for rel, _fe, src, how, size in _made:
        rows[rel] = (str(size), src, how.replace("|", "\\|"))
    try:
        nvcc_v = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout
        nvcc_v = re.search(r"release ([\d.]+)", nvcc_v).group(1)
    except Exception:
        nvcc_v = ""
    total = sum(int(r[0]) for r in rows.values())
    with open(old, "w") as fh:
        fh.write(README_HEAD.format(nvcc=nvcc_v))
        for rel in sorted(rows):
            size, src, how = rows[rel]
            fh.write(f"| `{rel}` | {size} | `{src}` | {how} |\n")
        counts = {}
        for rel in rows:
            counts[rel.split("/")[0]] = counts.get(rel.split("/")[0], 0) + 1
        fh.write(f"\n{len(rows)} files, {total} bytes: "
                 + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) + ".\n")


FRONTENDS = {"nvcc": gen_nvcc, "nvrtc": gen_nvrtc, "numba": gen_numba, "triton": gen_triton}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("frontends", nargs="*", metavar="FRONTEND",
                    help=f"front ends to regenerate: {', '.join(FRONTENDS)} (default: all)")
    ap.add_argument("--check", action="store_true", help="assemble every file with ptxas")
    ap.add_argument("--numba-old-worker", metavar="JSON", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.numba_old_worker:          # run inside .venv-gen12 by gen_numba()
        import json

        _numba_ccs(NUMBA_OLD_CCS)
        json.dump(_made, open(args.numba_old_worker, "w"))
        return 0
    unknown = [fe for fe in args.frontends if fe not in FRONTENDS]
    if unknown:
        ap.error(f"unknown front end(s): {', '.join(unknown)}")
    for fe in args.frontends or list(FRONTENDS):
        print(f"[{fe}]")
        FRONTENDS[fe]()
    write_readme()
    return 1 if args.check and check_all() else 0


if __name__ == "__main__":
    sys.exit(main())
