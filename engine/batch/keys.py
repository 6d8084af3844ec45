"""Content hashes: the identity of a result row, independent of paths and of which run made it.

A row's key covers everything its figures depend on: the PTX text, the kernel, the launch (every
field), the occupancy and scheduler, whether ptxas was asked, the mechanisms switched off, the
profile's text, the model and the Warpline version. Two rows with one key have the same figures,
so a cached row can stand in.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from engine import __version__
from engine.launch import Launch

# Bumped when the row layout changes without a version change, so old caches are not reused.
ROW_FORMAT = 1


def content_hash(data: bytes | str) -> str:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return hashlib.sha256(raw).hexdigest()


def canonical_launch(launch: Launch | None) -> Any:
    """A launch as JSON-ready data in which equal launches are equal (dict order does not matter,
    argument keys keep their kind: index 0 and name "0" differ)."""
    if launch is None:
        return None
    return {
        "grid": list(launch.grid), "block": list(launch.block), "smem": launch.smem_dynamic,
        "regs": launch.regs_per_thread, "args": canonical_args(launch.args),
        "trips": sorted(launch.trip_overrides.items()), "name": launch.name, "kernel": launch.kernel,
        **({"data": canonical_args(launch.data)} if launch.data else {}),
    }


def canonical_args(args: dict[str | int, Any]) -> list[list[Any]]:
    return sorted(([type(k).__name__, str(k), v] for k, v in args.items()), key=lambda item: item[:2])


def row_key(*, ptx_sha: str, kernel: str, variant: Any, profile_sha: str, model: str, policy: str,
            use_ptxas: bool, without: tuple[str, ...] = ()) -> str:
    """The key of one (file, kernel, launch, profile, model) row; ``variant`` is JSON-ready;
    ``without``: the mechanisms switched off."""
    payload = [ROW_FORMAT, __version__, ptx_sha, kernel, variant, profile_sha, model, policy, use_ptxas,
               sorted(without)]
    return content_hash(json.dumps(payload, sort_keys=True, separators=(",", ":")))
