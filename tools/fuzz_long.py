#!/usr/bin/env python3
"""The long fuzzing run: every reader of user files (tests/fuzz_readers.py), many more inputs
than ./test.sh runs, fresh random ones each time (the seed is printed, so a run can be repeated).

    .venv/bin/python tools/fuzz_long.py --examples 100000            # every reader
    .venv/bin/python tools/fuzz_long.py --examples 20000 --readers ptx,session --seed 7

Unlike the CI fuzzers it does not stop at the first failure: each input that makes a reader
raise anything but a WarplineError, or use more CPU time than the hang bound, is written to
``tests/fuzz_cases/<reader>/found-<hash>.<suffix>`` (the first three of each distinct failure,
told apart by the exception type and the engine line it came from), where
tests/test_fuzz_cases.py replays it on every run until the reader is fixed. A reader blocked, or
stuck in C code that the CPU-time signal cannot interrupt, is caught by a watchdog thread (10
minutes of wall time on one input) that writes the input and ends the process with status 3.
Prints one line per reader, and with ``--json`` the same as JSON; Ctrl+C or SIGTERM stops it with
the counts so far. Exit status: 0 when nothing failed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sys
import threading
import time
import traceback
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hypothesis import given, seed, settings  # noqa: E402

from tests.fuzz_readers import (  # noqa: E402
    CASES,
    HANG_SECONDS,
    check,
    inputs,
    keep_failure,
    readers,
    scratch_folder,
)

KEPT_PER_FAILURE = 3


def signature(exc: BaseException) -> str:
    """The exception type and the innermost line of the engine (or of the reader) it left from."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if f"{os.sep}engine{os.sep}" in f.filename or f.filename.endswith("fuzz_readers.py")]
    where = f"{Path(frames[-1].filename).relative_to(ROOT)}:{frames[-1].lineno}" if frames else "?"
    return f"{type(exc).__name__} at {where}"


class Watchdog(threading.Thread):
    """Ends the process when one input has run far past the hang bound (stuck where SIGALRM
    cannot reach), after writing that input where the failures go."""

    def __init__(self, limit: float, keep: Path) -> None:
        super().__init__(daemon=True)
        self.limit = limit
        self.keep = keep
        self.current: tuple[object, bytes, float] | None = None

    def run(self) -> None:
        while True:
            time.sleep(1.0)
            current = self.current
            if current is not None and time.monotonic() - current[2] > self.limit:
                reader, data, _started = current
                path = keep_failure(reader, data, self.keep)
                print(f"\n{reader.name}: an input has run for over {self.limit:.0f} s; kept at {path}",
                      file=sys.stderr, flush=True)
                os._exit(3)


def fuzz(name: str, examples: int, run_seed: int, hang: float, keep: Path, watchdog: Watchdog) -> dict:
    reader = readers()[name]
    outcomes: Counter[str] = Counter()
    failures: Counter[str] = Counter()
    kept: dict[str, list[str]] = {}
    slowest = [0.0]
    started = time.monotonic()

    with scratch_folder() as scratch:
        folder = Path(scratch)

        @settings(settings.get_profile("warpline-fuzz-long"), max_examples=examples)
        @seed(run_seed)
        @given(data=inputs(reader))
        def one(data: bytes) -> None:
            t0 = time.monotonic()
            watchdog.current = (reader, data, t0)
            try:
                outcomes[check(reader, data, folder, limit=hang)] += 1
            except Exception as exc:      # ReaderHang included: an AssertionError
                outcomes["failed"] += 1
                key = signature(exc)
                failures[key] += 1
                if len(kept.setdefault(key, [])) < KEPT_PER_FAILURE:
                    path = keep_failure(reader, data, keep)
                    path = path.rename(path.with_name("found-" + path.name))
                    kept[key].append(str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path))
                    print(f"\n{name}: {key}: {str(exc)[:200]!r} -> {kept[key][-1]}", file=sys.stderr, flush=True)
            finally:
                watchdog.current = None
            spent = time.monotonic() - t0
            slowest[0] = max(slowest[0], spent)
            done = sum(outcomes.values())
            if done % 5000 == 0:
                print(f"{name}: {done} inputs, {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)

        try:
            one()
        except KeyboardInterrupt:       # Ctrl+C or SIGTERM: report what was done
            stopped = True
        else:
            stopped = False
    seconds = time.monotonic() - started
    total = sum(outcomes.values())
    return {"reader": name, "stopped": stopped, "examples": total, "read": outcomes["read"],
            "refused": outcomes["refused"], "failed": outcomes["failed"], "failures": dict(failures), "kept": kept,
            "seconds": round(seconds, 1),
            "ms_per_input": round(1000 * seconds / max(total, 1), 2), "slowest_ms": round(1000 * slowest[0], 1),
            "seeds": len(reader.seeds()), "seed": run_seed}


def main(argv: list[str] | None = None) -> int:
    names = sorted(readers())
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=100_000, help="inputs per reader (default 100000)")
    parser.add_argument("--readers", default=",".join(names), help=f"comma-separated, of: {', '.join(names)}")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: a fresh one, printed)")
    parser.add_argument("--hang", type=float, default=HANG_SECONDS,
                        help="seconds of CPU time one input may take (default 30)")
    parser.add_argument("--keep", type=Path, default=CASES, help="where failing inputs go (tests/fuzz_cases)")
    parser.add_argument("--json", type=Path, help="also write the results to this file as JSON")
    ns = parser.parse_args(argv)
    chosen = [n.strip() for n in ns.readers.split(",") if n.strip()]
    unknown = sorted(set(chosen) - set(names))
    if unknown or ns.examples < 1:
        parser.error(f"unknown reader(s): {', '.join(unknown)}" if unknown else "--examples must be at least 1")
    run_seed = ns.seed if ns.seed is not None else random.SystemRandom().randrange(2**32)
    print(f"fuzz_long: seed {run_seed}, {ns.examples} inputs per reader, hang bound {ns.hang:g} s", flush=True)
    # The hang bound is CPU time; the watchdog's is wall time, for a reader blocked without
    # using the CPU (and generous: at a low priority on a busy machine an input may wait long).
    watchdog = Watchdog(max(600.0, 20 * ns.hang), ns.keep)
    watchdog.start()

    def interrupted(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupted)
    results = []
    for name in chosen:
        result = fuzz(name, ns.examples, run_seed, ns.hang, ns.keep, watchdog)
        results.append(result)
        stopped = " (stopped before the end)" if result["stopped"] else ""
        print(f"{name:14} {result['examples']:>8} inputs{stopped} ({result['seeds']} seeds): {result['read']} read, "
              f"{result['refused']} refused, {result['failed']} failed; {result['seconds']:.0f} s, "
              f"{result['ms_per_input']} ms per input, slowest {result['slowest_ms']:.0f} ms", flush=True)
        for key, count in result["failures"].items():
            print(f"    {count} x {key}: kept {', '.join(result['kept'][key])}", flush=True)
        if ns.json:
            ns.json.write_text(json.dumps(results, indent=2) + "\n")
        if result["stopped"]:
            break
    return 1 if any(r["failed"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
