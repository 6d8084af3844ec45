"""A Dask cluster of separate processes on 127.0.0.1, as docs/batch.md deploys one: a ``dask
scheduler`` process and ``dask worker`` processes (no nanny, so that killing one kills a worker),
started from this environment's Python in a folder outside the checkout, without PYTHONPATH, so
they import Warpline only the way a cluster node would (installed). ``hide_warpline`` starts them
as on a node where it is not installed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

START_TIMEOUT_S = 90.0
ROOT = Path(__file__).resolve().parents[1]
# Run before the dask command line when Warpline must look uninstalled: drops the editable
# install's finder and the checkout from the import path.
HIDE_WARPLINE = (
    "import os, sys\n"
    "sys.meta_path[:] = [f for f in sys.meta_path if '__editable__' not in getattr(f, '__module__', '')]\n"
    f"sys.path[:] = [p for p in sys.path if os.path.abspath(p or '.') != {str(ROOT)!r}]\n"
)


def clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("DASK_")}
    return env


class ProcessCluster:
    def __init__(self, folder: Path, workers: int = 2, hide_warpline: bool = False) -> None:
        self.folder = folder
        self.hide_warpline = hide_warpline
        self.workers: list[subprocess.Popen] = []
        folder.mkdir(parents=True, exist_ok=True)
        scheduler_file = folder / "scheduler.json"
        self.scheduler = self._start("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                     "--scheduler-file", str(scheduler_file), log="scheduler.log")
        try:
            self.address = self._wait_for_address(scheduler_file)
            for _ in range(workers):
                self.add_worker()
            self.wait_for_workers(workers)
        except BaseException:
            self.stop()
            raise

    def _start(self, *args: str, log: str) -> subprocess.Popen:
        if self.hide_warpline:
            code = HIDE_WARPLINE + f"sys.argv = ['dask', *{list(args)!r}]\nfrom dask.cli import run_cli\nrun_cli()\n"
            command = [sys.executable, "-c", code]
        else:
            command = [sys.executable, "-m", "dask", *args]
        with open(self.folder / log, "ab") as handle:
            return subprocess.Popen(command, cwd=self.folder, env=clean_env(), stdout=handle, stderr=subprocess.STDOUT,
                                    start_new_session=True)

    def _wait_for_address(self, scheduler_file: Path) -> str:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.scheduler.poll() is not None:
                raise RuntimeError(f"dask scheduler ended: {self.log('scheduler.log')}")
            try:
                return json.loads(scheduler_file.read_text())["address"]
            except (OSError, ValueError, KeyError):
                time.sleep(0.1)
        raise RuntimeError(f"dask scheduler did not start: {self.log('scheduler.log')}")

    def add_worker(self) -> subprocess.Popen:
        index = len(self.workers)
        worker = self._start("worker", self.address, "--nthreads", "1", "--no-nanny", "--no-dashboard",
                             "--name", f"w{index}", "--local-directory", str(self.folder / f"w{index}"),
                             "--death-timeout", "30", log=f"worker{index}.log")
        self.workers.append(worker)
        return worker

    def client(self):
        from distributed import Client

        return Client(self.address, timeout=30, set_as_default=False)

    def wait_for_workers(self, count: int) -> None:
        with self.client() as client:
            client.wait_for_workers(count, timeout=START_TIMEOUT_S)

    def log(self, name: str) -> str:
        try:
            return (self.folder / name).read_text(errors="replace")[-3000:]
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        for process in [*self.workers, self.scheduler]:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in [*self.workers, self.scheduler]:
            try:
                process.wait(timeout=5)          # a graceful close is not what the tests are about
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()

    def __enter__(self) -> ProcessCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
