#!/usr/bin/env python3
"""Write the GPU profiles made from specifications (A100, L4, L40S, RTX 4090, B200, RTX 5090).

None of these GPUs is lent to this project, so nothing in them is measured here; each profile
says so (``[provenance] measured_here = false``) and every figure names its source:

* device figures: NVIDIA's "Technical Specifications per Compute Capability" table (CUDA C++
  Programming Guide, CUDA 13.0) for what a compute capability fixes (threads, warps and blocks
  per SM, shared memory, carve-outs, registers), and each product's specification for what the
  part fixes (SMs, boost clock, L2, memory size and bandwidth);
* unit counts: the architecture whitepapers (FP32, FP64, SFU, load/store lanes per SM);
* throughputs λ: derived from those counts (``warp_size / (lanes per scheduler · schedulers)``)
  and, for DRAM, from the bandwidth per SM per cycle (128 bytes a coalesced request);
* latencies Λ and the launch and barrier overheads: carried over from ``profiles/h100.toml``,
  measured on the lent H100 by ``bench/micro``: the SM sub-partition (issue, register file,
  FMA and MUFU pipes, L1/shared memory) is the same design from Ampere to Blackwell; the DRAM
  latency is carried over in nanoseconds (converted at this GPU's clock), as DRAM timing does
  not scale with the SM clock. Each source string says which.

Run from the repository root: ``.venv/bin/python tools/spec_profiles.py`` (``--check`` compares
instead of writing; ``tests/test_spec_profiles.py`` does that).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.profiles import load_profile  # noqa: E402

GUIDE = "NVIDIA CUDA C++ Programming Guide (CUDA 13.0), table 'Technical Specifications per Compute Capability'"
OCCUPANCY = "CUDA 13.0 cuda_occupancy.h (register/shared-memory allocation granularity, sub-partitions, carve-outs)"


@dataclass(frozen=True)
class Capability:
    """What a compute capability fixes (the Programming Guide's table)."""

    version: str
    max_threads_per_sm: int
    max_blocks_per_sm: int
    smem_per_sm_kb: int               # the largest carve-out
    carveouts_kb: tuple[int, ...]
    smem_optin_kb: int                # the most one block may opt into
    l1_kb: int                        # unified L1 / shared memory per SM


CAPABILITIES = {
    "8.0": Capability("8.0", 2048, 32, 164, (0, 8, 16, 32, 64, 100, 132, 164), 163, 192),
    "8.9": Capability("8.9", 1536, 24, 100, (0, 8, 16, 32, 64, 100), 99, 128),
    "10.0": Capability("10.0", 2048, 32, 228, (0, 8, 16, 32, 64, 100, 132, 164, 196, 228), 227, 256),
    "12.0": Capability("12.0", 1536, 32, 100, (0, 8, 16, 32, 64, 100), 99, 128),
}


@dataclass(frozen=True)
class Gpu:
    key: str
    name: str
    architecture: str
    chip: str
    capability: str
    sm_count: int
    clock_mhz: int
    l2_mb: int
    memory_gb: int
    memory_kind: str
    bandwidth_gbps: int
    fp32_per_sm: int
    fp64_per_sm: int
    ldst_per_sm: int
    spec: str                          # where the part's figures come from
    whitepaper: str                    # where the unit counts come from
    default: bool = False              # default_for_target


GPUS = (
    Gpu("a100", "NVIDIA A100 SXM4 80GB", "Ampere", "GA100", "8.0", 108, 1410, 40, 80, "HBM2e", 2039, 64, 32, 32,
        "NVIDIA A100 Tensor Core GPU datasheet (SXM4 80GB: 108 SMs, 1410 MHz boost, 40 MB L2, "
        "80 GB HBM2e at 2,039 GB/s)",
        "NVIDIA A100 Tensor Core GPU Architecture whitepaper (GA100 SM: 64 FP32, 32 FP64, 16 SFU, 32 LD/ST lanes, "
        "4 tensor cores, 4 sub-partitions)", default=True),
    Gpu("l40s", "NVIDIA L40S", "Ada Lovelace", "AD102", "8.9", 142, 2520, 96, 48, "GDDR6", 864, 128, 2, 16,
        "NVIDIA L40S datasheet (142 SMs, 2520 MHz boost, 96 MB L2, 48 GB GDDR6 at 864 GB/s)",
        "NVIDIA Ada Lovelace GPU Architecture whitepaper (AD10x SM: 128 FP32, 2 FP64, 16 SFU, 16 LD/ST lanes, "
        "4 tensor cores, 4 sub-partitions)", default=True),
    Gpu("l4", "NVIDIA L4", "Ada Lovelace", "AD104", "8.9", 58, 2040, 48, 24, "GDDR6", 300, 128, 2, 16,
        "NVIDIA L4 datasheet (58 SMs, 2040 MHz boost, 48 MB L2, 24 GB GDDR6 at 300 GB/s)",
        "NVIDIA Ada Lovelace GPU Architecture whitepaper (AD10x SM: 128 FP32, 2 FP64, 16 SFU, 16 LD/ST lanes, "
        "4 tensor cores, 4 sub-partitions)"),
    Gpu("rtx4090", "NVIDIA GeForce RTX 4090", "Ada Lovelace", "AD102", "8.9", 128, 2520, 72, 24, "GDDR6X", 1008,
        128, 2, 16,
        "NVIDIA GeForce RTX 4090 specifications and Ada Lovelace whitepaper (128 SMs, 2520 MHz boost, 72 MB L2, "
        "24 GB GDDR6X at 1,008 GB/s)",
        "NVIDIA Ada Lovelace GPU Architecture whitepaper (AD10x SM: 128 FP32, 2 FP64, 16 SFU, 16 LD/ST lanes, "
        "4 tensor cores, 4 sub-partitions)"),
    Gpu("b200", "NVIDIA B200", "Blackwell", "GB100", "10.0", 148, 1965, 126, 180, "HBM3e", 8000, 128, 64, 32,
        "NVIDIA HGX B200 specifications (180 GB HBM3e per GPU at up to 8 TB/s) and the device's reported "
        "properties in public listings (148 SMs over two dies, 1965 MHz boost, 126 MB L2)",
        "NVIDIA Blackwell architecture technical brief (Blackwell SM: 128 FP32, 64 FP64, 16 SFU, 32 LD/ST lanes, "
        "4 tensor cores, 4 sub-partitions, as Hopper's)", default=True),
    Gpu("rtx5090", "NVIDIA GeForce RTX 5090", "Blackwell", "GB202", "12.0", 170, 2407, 96, 32, "GDDR7", 1792,
        128, 2, 16,
        "NVIDIA GeForce RTX 5090 specifications and RTX Blackwell whitepaper (170 SMs, 2407 MHz boost, 96 MB L2, "
        "32 GB GDDR7 at 1,792 GB/s)",
        "NVIDIA RTX Blackwell GPU Architecture whitepaper (GB20x SM: 128 FP32/INT32, 2 FP64, 16 SFU, 16 LD/ST "
        "lanes, 4 tensor cores, 4 sub-partitions)", default=True),
)


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:.4g}"


def render(gpu: Gpu, h100: object) -> str:
    cap = CAPABILITIES[gpu.capability]
    dev = h100.device                                      # type: ignore[attr-defined]
    mem = h100.pipeline.memory                             # type: ignore[attr-defined]
    mb = h100.manybsp                                      # type: ignore[attr-defined]
    units = h100.units                                     # type: ignore[attr-defined]
    carried = "carried over from profiles/h100.toml (measured on the lent H100 by bench/micro; the SM " \
              "sub-partition is the same design): not measured on this GPU"
    # DRAM: a 128-byte coalesced request per SM at the GPU's bandwidth shared by its SMs
    bytes_per_cycle_per_sm = gpu.bandwidth_gbps * 1e9 / (gpu.sm_count * gpu.clock_mhz * 1e6)
    dram_lam = round(128 / bytes_per_cycle_per_sm, 3)
    dram_ns = mem["dram_Lam"] / dev.clock_mhz * 1e3
    dram_Lam = round(dram_ns * gpu.clock_mhz / 1e3, 1)
    schedulers = 4
    alu_sched = gpu.fp32_per_sm // schedulers
    alu_lam = round(32 / (alu_sched * schedulers), 4)
    fp64_sched = max(1, gpu.fp64_per_sm // schedulers)
    fp64_T = gpu.fp64_per_sm / schedulers
    fp64_lam = round(32 / gpu.fp64_per_sm, 4)
    ldst_sched = gpu.ldst_per_sm // schedulers
    l2_bytes = gpu.l2_mb * 1024 * 1024
    out: list[str] = []
    w = out.append
    w("# Warpline GPU profile. Format: profiles/README.md. Every number has a source (the")
    w("# [sources] table, or a 'source' key next to it). Edit freely: the file is validated on load,")
    w("# and unknown or misspelt keys are rejected with their line number.")
    w(f"# {gpu.name} ({gpu.architecture}, {gpu.chip}, sm_{gpu.capability.replace('.', '')}): FROM SPECIFICATIONS,")
    w("# NOT MEASURED HERE. GENERATED by tools/spec_profiles.py (its docstring says how each figure is obtained).")
    w(f'description = "{gpu.name} (sm_{gpu.capability.replace(".", "")}): device figures from public '
      'specifications; costs derived from unit counts and bandwidth, latencies carried over from the '
      'measured H100 profile. Not measured on this GPU."')
    w("")
    w("[provenance]")
    w('basis = "from specifications"')
    w("measured_here = false")
    w("")
    w("[device]")
    w(f'name = "{gpu.name}"')
    w(f'architecture = "{gpu.architecture}"')
    w('vendor = "nvidia"')
    w(f'chip = "{gpu.chip}"')
    w(f'compute_capability = "{gpu.capability}"')
    if gpu.default:
        w("default_for_target = true             # PTX of this architecture without --profile runs on this one")
    w(f"sm_count = {gpu.sm_count}")
    w("schedulers_per_sm = 4                        # n_ws (four SM sub-partitions)")
    w("dispatch_units_per_scheduler = 1")
    w("warp_size = 32")
    w(f"clock_mhz = {gpu.clock_mhz}                 # boost clock; models count cycles, this only converts to time")
    w(f"max_threads_per_sm = {cap.max_threads_per_sm}")
    w(f"max_warps_per_sm = {cap.max_threads_per_sm // 32}")
    w(f"max_blocks_per_sm = {cap.max_blocks_per_sm}")
    w("max_threads_per_block = 1024")
    w("registers_per_sm = 65536")
    w("max_registers_per_block = 65536")
    w("max_registers_per_thread = 255")
    w("register_allocation_unit = 256               # registers per warp are rounded up to this")
    w("register_file_partitions = 4                 # register file split between sub-partitions")
    w("warp_allocation_granularity = 1")
    w(f"shared_memory_per_sm = {cap.smem_per_sm_kb * 1024}       # {cap.smem_per_sm_kb} KB, the largest carve-out")
    w(f"shared_memory_carveouts = [{', '.join(str(k * 1024) for k in cap.carveouts_kb)}]")
    w("max_shared_memory_per_block = 49152          # static limit: 48 KB")
    w(f"max_shared_memory_per_block_optin = {cap.smem_optin_kb * 1024}")
    w("shared_memory_allocation_unit = 128          # per-block allocation granularity, bytes")
    w("reserved_shared_memory_per_block = 1024      # taken by the driver for every block (sm_80 and newer)")
    w("shared_memory_banks = 32")
    w(f"l1_cache_bytes = {cap.l1_kb * 1024}                      # combined L1 / shared memory per SM")
    w(f"l2_cache_bytes = {l2_bytes}")
    w(f"global_memory_bytes = {gpu.memory_gb * 1000 ** 3}")
    w("global_memory_segment_bytes = 128")
    w(f"memory_bandwidth_gbps = {gpu.bandwidth_gbps}")
    w("")
    w("# Functional units: counts per SM / per scheduler (whitepaper); λ = warp_size / lanes of the SM;")
    w("# latencies carried over from the measured H100 (the same pipes since Ampere).")
    w("")

    def unit(name: str, per_sm: int, per_sched: int, T: float, lam: float, Lam: float, source: str,
             lat_comp: float | None = None) -> None:
        w(f"[units.{name}]")
        w(f"per_sm = {per_sm}")
        w(f"per_scheduler = {per_sched}")
        w(f"T = {_fmt(T)}")
        w(f"lat_comp = {_fmt(lat_comp if lat_comp is not None else Lam)}")
        w(f"lam = {_fmt(lam)}")
        w(f"Lam = {_fmt(Lam)}")
        w(f'source = "{source}"')
        w("")

    counts = f"counts: {gpu.whitepaper}"
    unit("alu", gpu.fp32_per_sm, alu_sched, alu_sched, alu_lam, units_lam(units, "alu"),
         f"{counts}; λ = 32 / {gpu.fp32_per_sm} FP32 lanes; Λ {carried}")
    unit("fp64", gpu.fp64_per_sm, fp64_sched, fp64_T, fp64_lam, units_lam(units, "fp64"),
         f"{counts}; λ = 32 / {gpu.fp64_per_sm} FP64 lanes; Λ {carried}")
    unit("sfu", 16, 4, 4, 2, units_lam(units, "sfu"), f"{counts}; λ = 32 / 16 MUFU lanes; Λ {carried}")
    unit("ldst", gpu.ldst_per_sm, ldst_sched, 8, 1, units_lam(units, "ldst"),
         f"{counts}; λ = 1: shared memory serves 128 bytes (32 banks of 4 bytes) per cycle per SM, "
         f"{GUIDE}; Λ (shared-memory load) {carried}")
    w("[units.tensor]")
    w("per_sm = 4")
    w("per_scheduler = 1")
    w("T = 1")
    w(f'source = "{counts}; no costs: the tensor pipes of this GPU are not measured (class defaults apply)"')
    w("")
    w("[manybsp]")
    w(f"mem_lat = {_fmt(dram_Lam)}                              # G2: the DRAM latency below")
    w(f"mu = {_fmt(mb.mu)}")
    w(f"block_lnch_ovh = {_fmt(mb.block_lnch_ovh)}")
    w(f"warp_lnch_ovh = {_fmt(mb.warp_lnch_ovh)}")
    w("issue_cycle = 1")
    w(f'source = "mem_lat = pipeline.memory.dram_Lam of this profile; mu, block_lnch_ovh, warp_lnch_ovh {carried} '
      '(mu is a placeholder there too); issue_cycle = 1 is 000\'s value"')
    w("")
    w("[manybsp.barrier_overhead]")
    w(f"# bar.sync cost by threads per block, {carried}.")
    for threads, cycles in mb.barrier_overhead:
        w(f"{threads} = {_fmt(cycles)}")
    w("")
    w("[pipeline]")
    w(f"issue_limit = {_fmt(h100.pipeline.issue_limit)}")        # type: ignore[attr-defined]
    w(f"lambda_alu = {_fmt(alu_lam)}")
    w("lambda_sfu = 2")
    w(f'source = "issue_limit {carried} (four schedulers issue one warp instruction each per cycle); '
      'lambda_alu, lambda_sfu = units.alu.lam and units.sfu.lam of this profile"')
    w("")
    w("[pipeline.memory]")
    w("# DRAM λ: 128 bytes (one coalesced request) at this GPU's bandwidth per SM per cycle; DRAM Λ: the")
    w("# H100's measured DRAM latency in nanoseconds at this GPU's clock; L2, L1, shared, local: H100's.")
    w(f"global_lam = {_fmt(dram_lam)}")
    w(f"global_Lam = {_fmt(dram_Lam)}")
    w(f"dram_lam = {_fmt(dram_lam)}")
    w(f"dram_Lam = {_fmt(dram_Lam)}")
    for key in ("l2_lam", "l2_Lam", "l1_lam", "l1_Lam", "shared_lam", "shared_Lam", "local_lam", "local_Lam"):
        if key in mem:
            w(f"{key} = {_fmt(mem[key])}")
    w(f'source = "dram_lam = 128 B / ({gpu.bandwidth_gbps} GB/s / ({gpu.sm_count} SMs x {gpu.clock_mhz} MHz)) '
      f'= 128 / {bytes_per_cycle_per_sm:.3f} bytes per cycle per SM ({gpu.spec}); dram_Lam = '
      f'{_fmt(mem["dram_Lam"])} cycles at {_fmt(dev.clock_mhz)} MHz = {dram_ns:.1f} ns on the lent H100, at '
      f'{gpu.clock_mhz} MHz; l2, l1, shared, local {carried}"')
    w("")
    w("[sources]")
    w("# Where the numbers come from. Keys name a section or a single key (\"device.clock_mhz\");")
    w("# the most specific entry wins. Unit sections carry their own 'source'.")
    w(f'device = "{GUIDE} ({gpu.capability}); {gpu.spec}"')
    for key in ("sm_count", "clock_mhz", "l2_cache_bytes", "global_memory_bytes", "memory_bandwidth_gbps"):
        w(f'"device.{key}" = "{gpu.spec}"')
    for key in ("register_allocation_unit", "register_file_partitions", "shared_memory_allocation_unit",
                "shared_memory_carveouts"):
        w(f'"device.{key}" = "{OCCUPANCY}"')
    w(f'"device.reserved_shared_memory_per_block" = "{GUIDE} (1 KB reserved per block on compute capability '
      '8.0 and newer)"')
    return "\n".join(out) + "\n"


def units_lam(units: object, name: str) -> float:
    """H100's measured latency Λ of a unit class."""
    from engine.units import Unit

    return float(units[Unit(name)].Lam)                    # type: ignore[index]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with profiles/ instead of writing")
    args = parser.parse_args(argv)
    h100 = load_profile(ROOT / "profiles" / "h100.toml")
    stale = []
    for gpu in GPUS:
        text = render(gpu, h100)
        path = ROOT / "profiles" / f"{gpu.key}.toml"
        if args.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(path.name)
        else:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)}")
    if stale:
        print(f"out of date: {', '.join(stale)} (run tools/spec_profiles.py)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
