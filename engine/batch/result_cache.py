"""The result cache: rows by key, in append-only JSON-lines files of one folder.

Each run appends to a file of its own (``rows-<host>-<pid>-<time>.jsonl``), so runs sharing a
folder never write into one file, and flushes after every unit: a run killed with SIGKILL loses at
most the unit it was writing, and a line cut short is skipped when the folder is read back. Reading
takes every file of the folder; a key found twice has the same figures both times (the key covers
every input), so either copy will do.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

from engine.errors import WarplineError

PATTERN = "rows-*.jsonl"


class ResultCache:
    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)
        self.rows: dict[str, dict[str, Any]] = {}
        self.skipped_lines = 0
        self.problems: list[str] = []     # "FILE line N: why", for each line skipped
        self._handle: TextIO | None = None

    def load(self) -> ResultCache:
        if not self.folder.is_dir():
            return self
        for path in sorted(self.folder.glob(PATTERN)):
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError as exc:
                raise WarplineError(f"{path}: cannot read the batch cache: {exc.strerror or exc}") from None
            for number, line in enumerate(text.splitlines(), 1):
                if not line.strip():
                    continue
                record = _record(line)
                if isinstance(record, str):
                    self.skipped_lines += 1
                    self.problems.append(f"{path.name} line {number}: {record}")
                    continue
                self.rows[record[0]] = record[1]
        return self

    def __contains__(self, key: object) -> bool:
        return key in self.rows

    def add(self, records: Iterable[tuple[str, dict[str, Any]]]) -> None:
        """Append ``records`` and flush them to the operating system before returning."""
        lines = []
        for key, row in records:
            self.rows[key] = row
            lines.append(json.dumps({"key": key, "row": row, "sum": row_sum(row)}, allow_nan=False,
                                    separators=(",", ":")))
        if not lines:
            return
        try:
            handle = self._open()
            # One write call per unit: a kill leaves whole lines plus at most one cut line.
            handle.write("\n".join(lines) + "\n")
            handle.flush()
        except OSError as exc:
            raise WarplineError(f"{self.folder}: cannot write the batch cache: {exc.strerror or exc}") from None

    def close(self) -> None:
        if self._handle is not None:
            try:
                os.fsync(self._handle.fileno())
            except OSError:
                pass
            self._handle.close()
            self._handle = None

    def _open(self) -> TextIO:
        if self._handle is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            host = "".join(c if c.isalnum() else "_" for c in socket.gethostname())[:40]
            name = f"rows-{host}-{os.getpid()}-{time.time_ns()}.jsonl"
            self._handle = open(self.folder / name, "a", encoding="utf-8")  # noqa: SIM115 - kept open for the run
        return self._handle


def row_sum(row: dict[str, Any]) -> str:
    text = json.dumps(row, sort_keys=True, allow_nan=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


KEY_LENGTH = 64     # a SHA-256 in hex (engine.batch.keys.row_key)


def _record(line: str) -> tuple[str, dict[str, Any]] | str:
    """``(key, row)``, or why the line is not one."""
    try:
        data = json.loads(line)
    except ValueError:
        return "cut off or not JSON"
    if not isinstance(data, dict) or not isinstance(data.get("row"), dict):
        return "not a cache record"
    key = data.get("key")
    if not isinstance(key, str) or len(key) != KEY_LENGTH or any(c not in "0123456789abcdef" for c in key):
        return "not a row key"
    if "sum" in data:
        try:
            damaged = data["sum"] != row_sum(data["row"])
        except ValueError:      # NaN or infinity written into a row
            damaged = True
        if damaged:
            return "the row does not match its checksum (damaged)"
    return key, data["row"]
