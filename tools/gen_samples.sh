#!/usr/bin/env bash
# Regenerate the PTX of every sample kernel and its ptxas resource report.
#
# Usage:  tools/gen_samples.sh [sample-name ...]     (default: every samples/*.cu)
#
# For each samples/<name>.cu and each architecture in ARCHS (default
# "sm_75 sm_80 sm_90") this writes
#   samples/ptx/<name>.<arch>.ptx           nvcc -ptx -lineinfo (.loc maps to .cu lines)
#   samples/ptx/<name>.<arch>.ptxas.txt     ptxas -v report (stderr of ptxas) for that PTX
# Needs nvcc/ptxas 12.x or 13.x on PATH (or NVCC=/path/to/nvcc, PTXAS=...).
# When the generator environment .venv-gen exists (see tools/gen_corpus.py), also
# writes <name>.sm_52 / .sm_61 PTX through NVRTC 12.x (see the end of this file).
# Idempotent: the outputs depend only on the sources and the toolkit ('.file'
# paths are rewritten relative to samples/ptx/, ptxas timing lines dropped).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
samples="$here/samples"
out="$samples/ptx"
NVCC="${NVCC:-nvcc}"
PTXAS="${PTXAS:-ptxas}"
ARCHS="${ARCHS:-sm_75 sm_80 sm_90}"
NVCC_FLAGS=(-ptx -lineinfo -O3 -std=c++17)

mkdir -p "$out"

if [ "$#" -gt 0 ]; then
    names=("$@")
else
    names=()
    for f in "$samples"/*.cu; do
        names+=("$(basename "$f" .cu)")
    done
fi

# Compile from inside samples/ with a relative file name, so the .file
# directives in the PTX do not carry this machine's absolute paths.
cd "$samples"
for name in "${names[@]}"; do
    src="$name.cu"
    [ -f "$src" ] || { echo "no such sample: $src" >&2; exit 1; }
    for arch in $ARCHS; do
        ptx="$out/$name.$arch.ptx"
        rep="$out/$name.$arch.ptxas.txt"
        "$NVCC" "${NVCC_FLAGS[@]}" -arch="$arch" "$src" -o "$ptx.tmp"
        # nvcc writes the absolute source path into '.file'; make it relative to
        # the PTX file's folder (ptx/ -> ../<name>.cu) so the outputs do not
        # depend on where the repository lives.
        sed -e "s#\.file\([[:space:]]*[0-9]*\) \"$samples/#.file\1 \"../#" "$ptx.tmp" > "$ptx"
        rm -f "$ptx.tmp"
        {
            echo "# ptxas -v -arch=$arch ptx/$name.$arch.ptx ($("$PTXAS" --version | tail -1))"
            # drop the 'Compile time = ... ms' lines: they change from run to run
            "$PTXAS" -v -arch="$arch" "$ptx" -o /dev/null 2>&1 | grep -v 'Compile time'
        } > "$rep"
        echo "wrote ptx/$name.$arch.ptx ($(grep -c '\.entry' "$ptx") kernels)"
    done
done

# Older targets (nvcc 13 stops at sm_75): NVRTC 12.x from the nvidia-cuda-nvrtc-cu12
# wheel writes compute_52 / compute_61 PTX (closest to the Maxwell/Pascal GPUs of the
# Many-BSP cases).  Optional: runs only when GEN_PY (default ../.venv-gen/bin/python)
# exists; the ptxas report then comes from a ptxas 12.x (PTXAS12, default: the one
# bundled with Triton in that environment), since ptxas 13 rejects sm_52/sm_61.
GEN_PY="${GEN_PY:-$here/.venv-gen/bin/python}"
OLD_ARCHS="${OLD_ARCHS:-sm_52 sm_61}"
if [ -x "$GEN_PY" ] && [ -n "$OLD_ARCHS" ]; then
    "$GEN_PY" - "$samples" "$OLD_ARCHS" "${names[@]}" <<'PY'
import ctypes, glob, os, re, subprocess, sys

samples, archs, names = sys.argv[1], sys.argv[2].split(), sys.argv[3:]
import nvidia.cuda_nvrtc
lib = ctypes.CDLL(glob.glob(os.path.join(list(nvidia.cuda_nvrtc.__path__)[0], "lib", "libnvrtc.so.12"))[0])
ptxas = os.environ.get("PTXAS12")
if not ptxas:
    try:
        import triton
        ptxas = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "ptxas")
    except Exception:
        ptxas = None
major, minor = ctypes.c_int(), ctypes.c_int()
lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))

def compile_ptx(text, fname, opts):
    prog = ctypes.c_void_p()
    lib.nvrtcCreateProgram(ctypes.byref(prog), text.encode(), fname.encode(), 0, None, None)
    arr = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
    rc = lib.nvrtcCompileProgram(prog, len(opts), arr)
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    if rc:
        sys.exit(f"NVRTC failed on {fname}:\n{log.value.decode()}")
    lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
    buf = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetPTX(prog, buf)
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return buf.value.decode()

for name in names:
    text = open(os.path.join(samples, name + ".cu")).read()
    for arch in archs:
        cc = arch.split("_")[1]
        # the file name given to NVRTC is what '.file' records: relative to ptx/
        ptx = compile_ptx(text, f"../{name}.cu",
                          [f"--gpu-architecture=compute_{cc}", "-lineinfo", "--std=c++17"])
        # NVRTC prefixes the working directory: keep '.file' relative to ptx/
        ptx = re.sub(r'(\.file\s+\d+\s+")[^"]*/([^/"]+")', r"\1../\2", ptx)
        out = os.path.join(samples, "ptx", f"{name}.{arch}.ptx")
        with open(out, "w") as fh:
            fh.write(ptx)
        rep = os.path.join(samples, "ptx", f"{name}.{arch}.ptxas.txt")
        if ptxas and os.path.exists(ptxas):
            ver = subprocess.run([ptxas, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]
            r = subprocess.run([ptxas, "-v", f"-arch={arch}", out, "-o", os.devnull],
                               capture_output=True, text=True)
            lines = [l for l in (r.stdout + r.stderr).splitlines()
                     if "Compile time" not in l and "deprecated" not in l]
            with open(rep, "w") as fh:
                fh.write(f"# ptxas -v -arch={arch} ptx/{name}.{arch}.ptx ({ver}); PTX from NVRTC "
                         f"{major.value}.{minor.value}\n" + "\n".join(lines) + "\n")
        print(f"wrote ptx/{name}.{arch}.ptx ({ptx.count('.entry')} kernels, NVRTC {major.value}.{minor.value})")
PY
fi
