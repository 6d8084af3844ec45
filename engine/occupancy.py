"""Resident blocks per SM: the CUDA occupancy rules, and Many-BSP's simpler ρ (000 eq. 21).

:func:`occupancy` follows the rules of NVIDIA's occupancy calculator (``cuda_occupancy.h``),
driven by the profile's figures rather than by compute-capability switches:

* warps per block = ceil(threads / warp_size); the warp and thread limits count whole warps;
* registers: regs/thread x warp_size rounded up to ``register_allocation_unit`` per warp; the
  register file is split into ``register_file_partitions`` equal slices and a warp's registers
  must fit in one slice, so warps/SM = partitions x floor(slice / regs per warp); blocks =
  floor(warps/SM / warps per block rounded up to ``warp_allocation_granularity``). A block whose
  registers (warps rounded up to the partition count) exceed ``max_registers_per_block``, or a
  kernel above ``max_registers_per_thread``, cannot launch (0 blocks);
* shared memory: static + dynamic + ``reserved_shared_memory_per_block`` rounded up to
  ``shared_memory_allocation_unit``; the SM's shared memory is the carve-out in use (by default
  the largest, as the calculator assumes; a preferred size picks the smallest carve-out that
  holds it, as the driver rounds a carve-out hint up); nothing allocated sets no limit;
* block slots: ``max_blocks_per_sm``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine.errors import LaunchError

if TYPE_CHECKING:
    from engine.profiles import Profile

# Order used to name the limiter when several limits are equal: the structural limits
# (threads, warps, block slots) first, because raising registers or shared memory would not help.
LIMITERS = ("threads", "warps", "block_slots", "registers", "shared_memory")

UNLIMITED = 2**31 - 1


@dataclass(frozen=True)
class Occupancy:
    """Resident blocks per SM and which resource limits them."""

    blocks_per_sm: int
    limiter: str  # one of LIMITERS
    limits: Mapping[str, int]  # blocks per SM allowed by each resource (UNLIMITED = none)
    active_warps: int
    occupancy_fraction: float  # active warps / max warps per SM
    warps_per_block: int
    registers_per_block: int  # as allocated
    smem_per_block: int  # as allocated (reserved part and rounding included)
    smem_per_sm: int  # the carve-out used


def _round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


def choose_carveout(profile: Profile, smem_per_block: int, preferred: int | None = None) -> int:
    """The SM's shared-memory size in bytes: the largest carve-out without ``preferred``, else
    the smallest carve-out of at least ``preferred`` bytes (and at least one block's need)."""
    dev = profile.device
    options = sorted(dev.shared_memory_carveouts) or [dev.shared_memory_per_sm]
    if preferred is None:
        return max(options)
    wanted = max(preferred, smem_per_block)
    for size in options:
        if size >= wanted:
            return size
    return max(options)


def occupancy(
    profile: Profile,
    threads_per_block: int,
    regs_per_thread: int,
    smem_per_block: int,
    *,
    carveout: int | None = None,
) -> Occupancy:
    """Blocks of ``threads_per_block`` threads that one SM holds at once.

    ``smem_per_block`` is static + dynamic shared memory in bytes (the reserved part is added
    here); ``carveout`` a preferred shared-memory size per SM in bytes (None: the largest).
    """
    dev = profile.device
    if threads_per_block <= 0:
        raise LaunchError(f"threads per block must be positive, got {threads_per_block}")
    if regs_per_thread < 0 or smem_per_block < 0:
        raise LaunchError("registers and shared memory per block cannot be negative")
    warps = -(-threads_per_block // dev.warp_size)
    limits: dict[str, int] = {}

    fits = threads_per_block <= dev.max_threads_per_block
    limits["threads"] = dev.max_threads_per_sm // (warps * dev.warp_size) if fits else 0
    limits["warps"] = dev.max_warps_per_sm // warps if fits else 0
    limits["block_slots"] = dev.max_blocks_per_sm

    regs_per_warp = _round_up(regs_per_thread * dev.warp_size, dev.register_allocation_unit)
    regs_per_block = regs_per_warp * warps
    if regs_per_warp == 0:
        limits["registers"] = UNLIMITED
    elif (
        regs_per_thread > dev.max_registers_per_thread
        or regs_per_warp * _round_up(warps, dev.register_file_partitions) > dev.max_registers_per_block
    ):
        limits["registers"] = 0
    else:
        slice_regs = dev.registers_per_sm // dev.register_file_partitions
        warps_per_sm = (slice_regs // regs_per_warp) * dev.register_file_partitions
        limits["registers"] = warps_per_sm // _round_up(warps, dev.warp_allocation_granularity)

    requested = smem_per_block + dev.reserved_shared_memory_per_block
    smem_alloc = _round_up(requested, dev.shared_memory_allocation_unit)
    smem_sm = choose_carveout(profile, smem_alloc, carveout)
    if smem_per_block > dev.max_smem_per_block_any:
        limits["shared_memory"] = 0
    elif smem_alloc == 0:
        limits["shared_memory"] = UNLIMITED
    else:
        # On sm_80+ even a block without shared memory holds the reserved kilobyte, as the
        # calculator counts it; it never binds there (228 KB / 1 KB > 32 block slots).
        limits["shared_memory"] = smem_sm // smem_alloc

    blocks = min(limits.values())
    limiter = next(name for name in LIMITERS if limits[name] == blocks)
    active = blocks * warps
    return Occupancy(
        blocks_per_sm=blocks,
        limiter=limiter,
        limits=limits,
        active_warps=active,
        occupancy_fraction=active / dev.max_warps_per_sm,
        warps_per_block=warps,
        registers_per_block=regs_per_block,
        smem_per_block=smem_alloc,
        smem_per_sm=smem_sm,
    )


def manybsp_rho(params: Mapping[str, Any]) -> int:
    """000 eq. (21): resident blocks per SM as the report computes them.

    ``params`` uses the names of 000's parameter blocks (``reference/manybsp/cases.json``):
    ``max_thread_per_sm``, ``n_t``, ``n_reg``, ``reg_per_thread``, ``shmem_size``,
    ``shmem_per_block``. Every term is floored; a 0-byte shared-memory request (or 0 registers)
    sets no limit. No allocation granularity: that is what distinguishes ρ from :func:`occupancy`.
    """
    try:
        n_t = int(params["n_t"])
        terms = [math.floor(params["max_thread_per_sm"] / n_t)]
        if params["reg_per_thread"] > 0:
            terms.append(math.floor(params["n_reg"] / (n_t * params["reg_per_thread"])))
        if params["shmem_per_block"] > 0:
            terms.append(math.floor(params["shmem_size"] / params["shmem_per_block"]))
    except KeyError as exc:
        raise LaunchError(f"Many-BSP rho needs the parameter {exc.args[0]!r}") from None
    except ZeroDivisionError:
        raise LaunchError("Many-BSP rho needs n_t > 0") from None
    return min(terms)


def manybsp_rho_for(
    profile: Profile, threads_per_block: int, regs_per_thread: int, smem_per_block: int
) -> int:
    """ρ of eq. (21) with the device figures taken from a profile."""
    dev = profile.device
    return manybsp_rho(
        {
            "max_thread_per_sm": dev.max_threads_per_sm,
            "n_t": threads_per_block,
            "n_reg": dev.registers_per_sm,
            "reg_per_thread": regs_per_thread,
            "shmem_size": dev.max_shared_memory_per_block,
            "shmem_per_block": smem_per_block,
        }
    )
