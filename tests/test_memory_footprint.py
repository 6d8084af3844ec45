"""The grid-wide footprint of each buffer against the compulsory bytes the block model charges."""

from __future__ import annotations

import dataclasses

import pytest

from engine.memory.access_report import AccessInfo
from engine.memory.affine import Affine, base_address
from engine.memory.footprint import AddressRange, affine_range, with_grid_reuse
from engine.memory.hierarchy import L2_SHARED_SHARE, SmContext, level_shares
from engine.profiles import load_profile
from engine.units import MemorySpace


def _load(index: int, **fields) -> AccessInfo:
    base = AccessInfo(index, index, f"ld.global.f32 #{index}", MemorySpace.GLOBAL, 4, None, kind="load",
                      sectors_per_request=4.0, lines_per_request=1.0, dram_ratio=1.0, block_miss=1.0)
    return dataclasses.replace(base, **fields)


def test_affine_range_spans_threads_blocks_and_iterations() -> None:
    # a[4 * (tid.x + 128 * ctaid.x) + 4096 * i] for 128 threads, 10 blocks, 3 iterations
    form = Affine(base_address("param0"), (("tid.x", 4), ("ctaid.x", 512), ("i(L)", 4096)))
    r = affine_range(form, {"tid.x": 128, "ctaid.x": 10, "i(L)": 3}, 4)
    assert r is not None
    assert r.low == base_address("param0")
    assert r.high - r.low + 1 == 4 * 127 + 512 * 9 + 4096 * 2 + 4
    assert r.elements == 128 * 10 * 3 and r.buffer == 1


def test_buffer_read_five_times_is_read_from_dram_once() -> None:
    # five loads of one 1 MB buffer (a stencil's neighbours), each charged as all-new sectors
    lo = base_address("param0")
    accesses = [_load(k) for k in range(5)]
    ranges = {k: AddressRange(lo, lo + (1 << 20) - 1) for k in range(5)}
    requests = (1 << 20) // 128              # each load alone covers the buffer once
    out = with_grid_reuse(accesses, ranges, lambda i: requests)
    assert all(a.grid_reuse == pytest.approx(0.2) for a in out)
    assert out[0].kernel_footprint_bytes == pytest.approx(1 << 20)
    profile = load_profile("h100")
    shares = level_shares(out[0], profile, SmContext())
    assert shares.dram == pytest.approx(0.2) and shares.l2 == pytest.approx(0.8)


def test_footprint_beyond_l2_keeps_only_the_share_that_fits() -> None:
    profile = load_profile("h100")
    # data the whole grid shares gets half of L2: each of its two partitions holds its own copy
    capacity = profile.device.l2_cache_bytes * L2_SHARED_SHARE
    access = _load(0, grid_reuse=0.25, kernel_footprint_bytes=4.0 * capacity)
    # a quarter of the re-reads still find their line: DRAM = 0.25 + 0.75 * (1 - 1/4)
    assert level_shares(access, profile, SmContext()).dram == pytest.approx(0.25 + 0.75 * 0.75)


def test_distinct_buffers_and_stores_are_kept_apart() -> None:
    a, b = base_address("param0"), base_address("param1")
    accesses = [_load(0), _load(1), dataclasses.replace(_load(2), kind="store")]
    ranges = {0: AddressRange(a, a + 4095), 1: AddressRange(b, b + 4095), 2: AddressRange(a, a + 4095)}
    out = with_grid_reuse(accesses, ranges, lambda i: 32)      # 32 requests x 128 B = 4 KB each
    assert [x.grid_reuse for x in out] == [1.0, 1.0, 1.0]
    # buffer a is read and written: it occupies L2 once
    assert out[0].kernel_footprint_bytes == pytest.approx(2 * 4096)


def test_a_small_gathered_buffer_stays_in_l2_while_a_large_stream_passes() -> None:
    # a CSR product's x: 4 MB gathered through loaded column indices, each sector read 128
    # times at random, while 136 MB of matrix streams once through L2 (50 MB)
    profile = load_profile("h100")
    mb = float(1 << 20)
    gather = _load(0, method="lanes", grid_reuse=1 / 128, buffer_footprint_bytes=4 * mb,
                   kernel_footprint_bytes=140 * mb)
    # between two reads of a sector: x itself plus 1/128 of the rest, 5 MB: every re-read hits
    assert level_shares(gather, profile, SmContext()).dram == pytest.approx(1 / 128)
    # a gathered buffer larger than L2 misses whatever streams beside it
    big = dataclasses.replace(gather, buffer_footprint_bytes=100 * mb)
    assert level_shares(big, profile, SmContext()).dram > 0.4


def test_a_halo_read_before_the_first_element_stays_in_its_buffer() -> None:
    # in[i - nx] of a stencil at row 0 would lie before the buffer; the kernel's guard keeps it
    # out, so the range starts at the buffer (else it straddled two buffers and was left out,
    # every halo read counted as a DRAM access)
    form = Affine(-16384, (("param0", 1), ("tid.x", 4), ("ctaid.y", 16384)))
    r = affine_range(form, {"tid.x": 32, "ctaid.y": 512}, 4)
    assert r is not None and r.low == base_address("param0") and r.buffer == 1
    assert r.high == base_address("param0") - 16384 + 4 * 31 + 16384 * 511 + 3


def test_sectors_a_store_leaves_half_written_are_read_before_they_are_written() -> None:
    from engine.memory.hierarchy import dram_fetch_factor

    # out[2 * i] = ...: a warp writes every other float, 8 sectors of which it fills half each.
    # Nsight Compute on the H100 measured 249 MB of DRAM traffic for 128 MB of written sectors.
    lo = base_address("param1")
    store = dataclasses.replace(_load(0), kind="store", sectors_per_request=8.0, lines_per_request=2.0,
                                efficiency=0.5, active_lanes=32.0)
    n = 1 << 20
    requests = n // 32
    out = with_grid_reuse([store], {0: AddressRange(lo, lo + 8 * n - 1)}, lambda i: requests)
    assert out[0].fill_share == 1.0 and dram_fetch_factor(out[0]) == 2.0
    # the same stores beside a load of the same buffer find its sectors in L2: no fill
    load = dataclasses.replace(_load(1), sectors_per_request=8.0)
    both = with_grid_reuse([store, load], {0: AddressRange(lo, lo + 8 * n - 1),
                                           1: AddressRange(lo, lo + 8 * n - 1)}, lambda i: requests)
    assert both[0].fill_share == 0.0
    # stores that write every byte of the sectors they touch need no fill either
    full = dataclasses.replace(store, sectors_per_request=4.0, efficiency=1.0)
    assert with_grid_reuse([full], {0: AddressRange(lo, lo + 4 * n - 1)}, lambda i: requests)[0].fill_share == 0
