"""Compile suite v3's Triton kernels to sm_90 PTX ahead of time, without a GPU.

    .venv-triton/bin/python tools/device/suite_v3/gen_triton.py [--check] [family ...]

Needs Triton in its own environment (``python3 -m venv .venv-triton && .venv-triton/bin/pip
install triton==3.6.0``; the device machines have the same 3.6.0). Each variant below is one
family of the suite: its source ``samples/v3/<source>.py`` is compiled with
``triton.compile(ASTSource(...), target=GPUTarget("cuda", 90, 32))`` and writes

* ``samples/v3/ptx/<family>.sm_90.ptx``: Triton's PTX unchanged except that the kernel (entry and
  parameter names) is renamed from the Python function's name to the variant's ``entry``, so that
  every kernel of the suite has its own name, and that ``.file`` paths are made relative to
  ``samples/v3/ptx/``;
* ``samples/v3/ptx/<family>.sm_90.triton.json``: what a launch needs and Triton decided: threads
  per program (32 * num_warps), dynamic shared memory bytes, the parameter list as the PTX has it
  (Triton 3.6 appends two pointer parameters, the global and the profile scratch buffers, which
  these kernels do not use: their sizes are 0), constexprs, options, Triton's version;
* ``samples/v3/ptx/<family>.sm_90.ptxas.txt``: ``ptxas -v`` on the PTX.

Pointer and integer arguments are declared divisible by 16 (``tt.divisibility``), as Triton's
launcher specialises them for the 16-byte-aligned buffers and multiple-of-16 sizes the suite uses.
``--check`` compiles and compares with the files instead of writing them.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
V3 = ROOT / "samples" / "v3"
ARCH = "sm_90"

# family -> how to compile it. Each variant is one kernel of the suite.
VARIANTS: dict[str, dict] = {
    "tt_matmul_128": {
        "source": "tt_matmul", "function": "matmul_kernel", "entry": "matmul_t128",
        "signature": {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32"},
        "constexprs": {"BM": 128, "BN": 128, "BK": 64}, "num_warps": 8, "num_stages": 4,
    },
    "tt_matmul_64": {
        "source": "tt_matmul", "function": "matmul_kernel", "entry": "matmul_t64",
        "signature": {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32"},
        "constexprs": {"BM": 64, "BN": 64, "BK": 32}, "num_warps": 4, "num_stages": 3,
    },
    "tt_softmax": {
        "source": "tt_softmax", "function": "softmax_kernel", "entry": "softmax_chunked",
        "signature": {"x_ptr": "*fp16", "y_ptr": "*fp16", "n_cols": "i32"},
        "constexprs": {"CHUNK": 1024}, "num_warps": 4, "num_stages": 3,
    },
    "tt_layernorm": {
        "source": "tt_layernorm", "function": "layernorm_kernel", "entry": "layernorm_chunked",
        "signature": {"x_ptr": "*fp16", "w_ptr": "*fp16", "b_ptr": "*fp16", "y_ptr": "*fp16", "n_cols": "i32",
                      "eps": "fp32"},
        "constexprs": {"CHUNK": 1024}, "num_warps": 4, "num_stages": 3,
    },
    "tt_attention_causal": {
        "source": "tt_attention", "function": "attention_kernel", "entry": "attention_causal",
        "signature": {"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "o_ptr": "*fp16", "seq": "i32",
                      "scale": "fp32"},
        "constexprs": {"HEAD": 64, "BM": 128, "BN": 64, "CAUSAL": True}, "num_warps": 8, "num_stages": 3,
    },
    "tt_attention_full": {
        "source": "tt_attention", "function": "attention_kernel", "entry": "attention_full",
        "signature": {"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "o_ptr": "*fp16", "seq": "i32",
                      "scale": "fp32"},
        "constexprs": {"HEAD": 64, "BM": 128, "BN": 64, "CAUSAL": False}, "num_warps": 8, "num_stages": 3,
    },
}

_ENTRY = re.compile(r"\.entry\s+([\w$]+)\s*\((.*?)\)", re.S)
_PARAM = re.compile(r"\.param\s+\.(\w+)(?:\s+\.ptr(?:\s+\.(?!align)\w+)*(?:\s+\.align\s+\d+)?)?\s+([\w$]+)")


def _load(source: str):
    path = V3 / f"{source}.py"
    spec = importlib.util.spec_from_file_location(f"warpline_suite_v3_{source}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module        # Triton reads the function's source through its module
    spec.loader.exec_module(module)
    return module, path


def compile_variant(family: str) -> tuple[str, dict, str]:
    """(PTX text, metadata, ptxas report) of one variant."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    v = VARIANTS[family]
    module, path = _load(v["source"])
    fn = getattr(module, v["function"])
    signature = dict(v["signature"])
    for name in v["constexprs"]:
        signature[name] = "constexpr"
    names = list(fn.arg_names)
    attrs = {(names.index(name),): [["tt.divisibility", 16]]
             for name, kind in v["signature"].items() if kind.startswith("*") or kind == "i32"}
    src = ASTSource(fn, signature=signature, constexprs=dict(v["constexprs"]), attrs=attrs)
    options = {"num_warps": v["num_warps"], "num_stages": v["num_stages"]}
    kernel = triton.compile(src, target=GPUTarget("cuda", 90, 32), options=options)
    md = kernel.metadata
    if md.global_scratch_size or md.profile_scratch_size:
        raise SystemExit(f"{family}: needs scratch memory ({md.global_scratch_size}, {md.profile_scratch_size} B); "
                         "the suite's driver passes none")
    ptx = kernel.asm["ptx"]
    # the entry and its parameters (<function>_param_<i>) take the variant's name
    ptx = re.sub(rf"\b{re.escape(v['function'])}(?=\b|_param_)", v["entry"], ptx)
    ptx = ptx.replace(f'"{path.parent}/', '"../')
    ptx = ptx.replace(f'"{Path(triton.__file__).parent}/', '"triton/')   # Triton's own library code
    entries = {m.group(1): [(t, n) for t, n in _PARAM.findall(m.group(2))] for m in _ENTRY.finditer(ptx)}
    if list(entries) != [v["entry"]]:
        raise SystemExit(f"{family}: expected one entry {v['entry']}, found {list(entries)}")
    params = entries[v["entry"]]
    user = [n for n in v["signature"]]
    described = []
    for i, (ptx_type, ptx_name) in enumerate(params):
        role = user[i] if i < len(user) else ("global_scratch" if i == len(user) else "profile_scratch")
        described.append({"index": i, "ptx_name": ptx_name, "ptx_type": ptx_type, "argument": role})
    if len(params) != len(user) + 2:
        raise SystemExit(f"{family}: {len(params)} PTX parameters for {len(user)} arguments: not Triton 3.6's layout")
    meta = {
        "family": family, "source": f"{v['source']}.py", "function": v["function"], "entry": v["entry"],
        "triton_version": triton.__version__, "target": "cuda sm_90 (PTX .target sm_90a), warp size 32",
        "num_warps": md.num_warps, "num_stages": md.num_stages, "num_ctas": md.num_ctas,
        "block": [32 * md.num_warps, 1, 1], "shared_bytes": md.shared,
        "constexprs": {k: v2 for k, v2 in v["constexprs"].items()}, "signature": v["signature"],
        "divisible_by_16": [n for n, kind in v["signature"].items() if kind.startswith("*") or kind == "i32"],
        "params": described,
        "scratch": {"global_scratch_size": md.global_scratch_size, "profile_scratch_size": md.profile_scratch_size},
        "ptx_version": re.search(r"^\.version\s+(\S+)", ptx, re.M).group(1),
    }
    report = _ptxas(ptx, family)
    return ptx, meta, report


def _ptxas(ptx: str, family: str) -> str:
    tmp = Path("/tmp") / f"warpline_{family}.ptx"
    tmp.write_text(ptx)
    version = subprocess.run(["ptxas", "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]
    run = subprocess.run(["ptxas", "-v", f"-arch={ARCH}a", str(tmp), "-o", "/dev/null"], capture_output=True, text=True)
    lines = [f"# ptxas -v -arch={ARCH}a ptx/{family}.{ARCH}.ptx ({version})"]
    lines += [ln for ln in (run.stderr + run.stdout).splitlines() if "Compile time" not in ln]
    if run.returncode:
        raise SystemExit(f"{family}: ptxas failed:\n" + "\n".join(lines))
    return "\n".join(lines).replace(str(tmp), f"ptx/{family}.{ARCH}.ptx") + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("families", nargs="*", help="default: every variant")
    parser.add_argument("--check", action="store_true", help="compare with the files instead of writing")
    ns = parser.parse_args()
    bad = 0
    for family in ns.families or list(VARIANTS):
        ptx, meta, report = compile_variant(family)
        out = {V3 / "ptx" / f"{family}.{ARCH}.ptx": ptx,
               V3 / "ptx" / f"{family}.{ARCH}.triton.json": json.dumps(meta, indent=1) + "\n",
               V3 / "ptx" / f"{family}.{ARCH}.ptxas.txt": report}
        for path, text in out.items():
            if ns.check:
                if not path.exists() or path.read_text() != text:
                    print(f"out of date: {path.relative_to(ROOT)}")
                    bad += 1
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
        if not ns.check:
            print(f"wrote ptx/{family}.{ARCH}.ptx: {meta['entry']}, {meta['block'][0]} threads, "
                  f"{meta['shared_bytes']} B shared, {len(meta['params'])} params")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
