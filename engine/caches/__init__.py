"""Cache simulation: where each sampled request's sectors are served (L1, L2 or DRAM).

The run of the sampled warps (:mod:`engine.execution`) logs every global, local and texture
request in issue order, one entry per 128-byte line it touches with the 32-byte sectors it
wants. :func:`simulate_caches` replays that log through

* **L1**: one per block, sectored (four 32-byte sectors per 128-byte line), set-associative with
  LRU replacement, of the SM's L1 data capacity (what the launch's shared memory leaves of the
  combined L1/shared array) divided among the blocks resident on the SM: blocks of one SM are far
  apart in launch order and share no data, so each has its share of the capacity. Loads that may
  be cached allocate; ``.cg``/``.cv``/volatile loads, stores (write-through) and atomics go to L2.
* **L2**: one for the GPU, sectored, set-associative with LRU over hashed sets, of the profile's
  effective capacity (a line read by SMs of both L2 partitions is held twice: half the size,
  ``L2_EFFECTIVE_SHARE``), a pseudo-random victim. A missing sector is read from DRAM with its
  64-byte neighbour (``DRAM_FETCH_BYTES``). Stores write back: a line evicted with dirty sectors
  writes them to DRAM, after reading any sector it only partly wrote.
* **L2 shared by a wave**: a block's re-read of a line it touched itself loses the hits the
  blocks running beside it would have evicted meanwhile (``replay_requests``' concurrency); in
  reuse distances data one SM reads alone takes ``L2_ROOM_PRIVATE`` of the room of data every SM
  reads; and per instruction the share of its sectors on data other blocks read too
  (``CacheResult.shared_share``: such lines reach the SMs faster, the profile's
  ``l2_shared_read_gain``).

The result (:class:`CacheResult`) gives, per instruction, the share of its requested sectors each
level served and the DRAM bytes it caused, over the *measured* blocks of the sample, and the
launch's DRAM bytes and hit rates extrapolated from them (:func:`launch_traffic`).

Modules: :mod:`engine.caches.simulation` (the steps of :func:`simulate_caches` and the launch's
traffic), :mod:`engine.caches.replay` (the compiled replay) and :mod:`engine.caches.buffer_footprints`
(buffers' footprints over the grid).
"""

from engine.caches.buffer_footprints import BUFFER_LINE_SHIFT, BufferFootprint, grid_footprint, reuse_distance
from engine.caches.simulation import (
    ATOMIC,
    DRAM_FETCH_BYTES,
    L1_LEAST_CARVEOUT_BYTES,
    L1_UNAVAILABLE_BYTES,
    L1_WAYS,
    L2_EFFECTIVE_SHARE,
    L2_ROOM_PRIVATE,
    L2_WAYS,
    LINE,
    LOAD_CACHED,
    LOAD_UNCACHED,
    SECTOR,
    STORE,
    CacheConfig,
    CacheResult,
    LaunchTraffic,
    SimulatedLevels,
    cache_config,
    l1_data_bytes,
    launch_traffic,
    randomly_placed,
    simulate_caches,
    simulated_levels,
)

__all__ = [
    "ATOMIC", "BUFFER_LINE_SHIFT", "DRAM_FETCH_BYTES", "L1_LEAST_CARVEOUT_BYTES", "L1_UNAVAILABLE_BYTES", "L1_WAYS",
    "L2_EFFECTIVE_SHARE", "L2_ROOM_PRIVATE", "L2_WAYS", "LINE", "LOAD_CACHED", "LOAD_UNCACHED", "SECTOR", "STORE",
    "BufferFootprint", "CacheConfig", "CacheResult", "LaunchTraffic", "SimulatedLevels", "cache_config",
    "grid_footprint", "l1_data_bytes", "launch_traffic", "randomly_placed", "reuse_distance", "simulate_caches",
    "simulated_levels",
]
