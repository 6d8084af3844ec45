"""Opening a PTX file without blocking the window: list its kernels, ask which one, parse only it.

Two steps, each run by a plain ``threading.Thread`` (never a Qt thread: see :mod:`gui.worker` for
why no Qt object is touched off the UI thread):

1. :func:`list_kernels`: read the file and index its kernels (``engine.ptx.index_kernels``: no
   body is parsed, a 25 MB library takes a fraction of a second). The kernel is settled there
   when the caller names one, when a launch file next to the PTX names one, or when the file
   has a single kernel; otherwise the UI thread asks the user (the ``choose`` callback) while
   the window keeps running;
2. :func:`load_kernel`: parse only that kernel (``engine.ptx.parse_kernel``), resolve its inputs
   (profile, launch, registers: ``ptxas -v`` on a large file takes seconds) and hash the bytes
   that were read. The parse reports how far it is through the kernel (``progressChanged``: the
   status bar's bar fills), and a cancelled load stops the parse there rather than finishing it
   for nothing.

A session file (and an autosave being restored) takes the same two steps in one thread
(:func:`load_session_file`): the session is read and validated, the PTX indexed, and only the
session's kernel parsed and resolved with the session's profile; the kernel is named by the
session, so nothing is asked.

Outcomes cross to the UI thread through a queue that a QTimer drains. :meth:`PtxLoader.cancel`
sets the request's flag: its thread stops at the next step and whatever it still delivers is
dropped, so a cancelled load never touches the open session. The same functions run inline
for callers that need the file open when the call returns (``MainWindow.open_file``).
"""

from __future__ import annotations

import encodings.utf_8_sig  # noqa: F401 - the codec of PTX text, loaded here rather than in the thread
import hashlib
import os
import queue
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

# Imported here, on the UI thread: shiboken's import hook is not thread-safe (gui/worker.py), and
# resolve_inputs imports engine.occupancy lazily.
import engine.occupancy  # noqa: F401
from engine.errors import WarplineError
from engine.inputs import KernelInputs, find_launch_file, resolve_inputs
from engine.launch import load_launch_file
from engine.names import display_name, find_kernel
from engine.ptx import index_kernels, parse_kernel
from engine.ptx.index import read_ptx_bytes
from engine.ptx.summary import KernelSummary, summarize
from engine.session_file import MissingPtxError, SessionData, load_session

POLL_MS = 15     # how often the UI thread looks for the loader's outcomes while one is pending


class Cancelled(Exception):
    """The request was cancelled; raised between two steps of a load."""


@dataclass(frozen=True)
class KernelList:
    """A file's bytes and kernels (in file order); ``chosen`` is the kernel to open when it is
    settled without asking (None: ask, the file has several and nothing names one)."""

    data: bytes
    names: tuple[str, ...]
    chosen: str | None
    spans: tuple[tuple[int, int], ...] = ()    # each kernel's byte range in ``data`` (progress)
    # what the kernel picker shows of each (size, loops, launch bounds), when it is to be asked
    summaries: tuple[KernelSummary, ...] = ()


@dataclass(frozen=True)
class Loaded:
    """One kernel of a file, ready to become the session."""

    inputs: KernelInputs
    sha256: str
    kernels: tuple[str, ...]       # every kernel of the file, for the kernel box


def _check(cancelled: Callable[[], bool]) -> None:
    if cancelled():
        raise Cancelled


def list_kernels(path: Path, wanted: str | None = None,
                 cancelled: Callable[[], bool] = lambda: False, ask: bool = False) -> KernelList:
    """Read ``path`` and index its kernels; ``wanted`` names one (any spelling find_kernel
    accepts). A file without kernels, or a wanted kernel it does not have, is a WarplineError.
    ``ask``: a file of several kernels is asked about even when a sample's launch file names one
    (a second kernel opened as the comparison is usually another kernel of the same file)."""
    filename = os.fspath(path)
    data = read_ptx_bytes(filename)
    _check(cancelled)
    entries = index_kernels(data, filename)
    _check(cancelled)
    names = tuple(e.name for e in entries)
    spans = tuple((e.start, e.end) for e in entries)
    if wanted is None:
        launch_file = None if ask and len(entries) > 1 else find_launch_file(path)
        if launch_file is not None:
            # the sample's launch file says which kernel it launches (as resolve_inputs reads it)
            launches = load_launch_file(launch_file).launches
            wanted = launches[0].kernel if launches and launches[0].kernel else None
        elif len(entries) > 1:
            return KernelList(data, names, None, spans, tuple(summarize(data, entries)))
    return KernelList(data, names, find_kernel(entries, wanted, filename).name, spans)


def load_kernel(path: Path, listing: KernelList, kernel: str,
                cancelled: Callable[[], bool] = lambda: False, profile: str | None = None,
                progress: Callable[[float], None] | None = None) -> Loaded:
    """Parse only ``kernel`` of the listed file and resolve its inputs (launch and registers;
    ``profile`` None: the default profile). ``progress(fraction)``: how far the parse is through
    the kernel, now and then; a cancellation stops the parse at the next report."""
    span = listing.spans[listing.names.index(kernel)] if len(listing.spans) == len(listing.names) else None

    def parsed(done: int, total: int) -> None:
        _check(cancelled)
        if progress is not None:
            # the text is the file's (other bodies blanked): positions count from the kernel's
            # first byte (characters and bytes agree in PTX, which is ASCII but for comments)
            start, end = span if span is not None else (0, total)
            progress(min(1.0, max(0.0, (done - start) / max(1, end - start))))

    module = parse_kernel(listing.data, kernel, os.fspath(path), parsed)
    _check(cancelled)
    inputs = resolve_inputs(path, kernel=kernel, module=module, profile=profile)
    _check(cancelled)
    return Loaded(inputs, hashlib.sha256(listing.data).hexdigest(), listing.names)


def load_session_file(path: Path, data: SessionData | None = None,
                      cancelled: Callable[[], bool] = lambda: False) -> tuple[SessionData, Loaded]:
    """Read the session at ``path`` (unless ``data`` is it, read) and load its kernel: the PTX
    is indexed and only that kernel parsed, with the session's profile. Every failure (the
    session, its PTX file, its kernel, its profile) is a WarplineError naming the file."""
    if data is None:
        data = load_session(path)
    _check(cancelled)
    ptx = data.ptx_path
    if not ptx.is_file():
        what = "does not exist" if not ptx.exists() else "is not a regular file"
        beside = f" (nor is {ptx.name} beside the session)" if not ptx.exists() else ""
        raise MissingPtxError(f"{os.fspath(path)}: the session's PTX file {ptx} {what}{beside}", Path(path), ptx)
    listing = list_kernels(ptx, data.state.kernel, cancelled)
    assert listing.chosen is not None     # named by the session: found, or list_kernels raised
    return data, load_kernel(ptx, listing, listing.chosen, cancelled, profile=data.state.profile)


@dataclass(eq=False)
class LoadRequest:
    """One file (or one kernel of the open file) being opened."""

    path: Path                           # the PTX file, or the session file (origins "session", "restore")
    kernel: str | None = None            # named by the caller: nothing is asked
    # "open" (a PTX file), "kernel" (another kernel of the open file), "session" (a session
    # file), "restore" (an autosave claimed from a dead process) or "baseline" (a stored
    # baseline's kernel, loaded to be recomputed)
    origin: str = "open"
    profile: str | None = None           # kept instead of the default profile (origins "kernel", "baseline")
    session: SessionData | None = None   # the session read (given for "restore": read already)
    notes: list[str] = field(default_factory=list)   # what no longer matches (set by the session)
    choose: Callable[[list[str]], str | None] | None = None
    on_done: Callable[[LoadRequest], None] | None = None
    stage: str = ""
    listing: KernelList | None = None
    loaded: Loaded | None = None
    error: WarplineError | None = None
    cancelled: bool = False
    finished: bool = False
    _flag: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def ok(self) -> bool:
        return self.finished and self.loaded is not None


class PtxLoader(QObject):
    """Runs one :class:`LoadRequest` at a time; a new one cancels the one before."""

    stageChanged = Signal(object, str)   # request, what it is doing now (in words)
    progressChanged = Signal(object, float)  # request, how far the current step is (0..1)
    loaded = Signal(object)              # request, with .loaded
    finished = Signal(object)            # request: loaded, failed (.error) or cancelled
    busyChanged = Signal(bool)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.current: LoadRequest | None = None
        self._out: queue.Queue[tuple[LoadRequest, str, Any]] = queue.Queue()
        self._poll = QTimer(self)
        self._poll.setInterval(POLL_MS)
        self._poll.timeout.connect(self._drain)

    @property
    def busy(self) -> bool:
        return self.current is not None

    # ------------------------------------------------------------------ UI thread

    def start(self, request: LoadRequest) -> LoadRequest:
        """Start ``request`` (cancelling any load in progress); the outcome comes as ``finished``."""
        if self.current is not None:
            self.cancel()
        self.current = request
        self.busyChanged.emit(True)
        self._poll.start()
        if request.origin in ("session", "restore"):
            what = "unsaved work" if request.origin == "restore" else "session"
            name = request.session.ptx_path.name if request.session is not None else request.path.name
            self._stage(request, f"Reading the {what} of {name}")
            self._spawn(request, self._session_step)
        else:
            self._stage(request, f"Reading and indexing {request.path.name}")
            self._spawn(request, self._index_step)
        return request

    def cancel(self) -> bool:
        """Cancel the load in progress (True if there was one): nothing of it reaches the session."""
        request = self.current
        if request is None:
            return False
        request._flag.set()
        request.cancelled = True
        self._finish(request)
        return True

    def _spawn(self, request: LoadRequest, step: Callable[[LoadRequest], Any]) -> None:
        thread = threading.Thread(target=self._run, args=(request, step), daemon=True,
                                  name="warpline-open")
        thread.start()

    def _stage(self, request: LoadRequest, text: str) -> None:
        request.stage = text
        self.stageChanged.emit(request, text)

    def _drain(self) -> None:
        while True:
            try:
                request, kind, payload = self._out.get_nowait()
            except queue.Empty:
                break
            if request is not self.current or request.cancelled:
                continue                     # cancelled, or replaced by a newer request
            if kind == "progress":
                self.progressChanged.emit(request, payload)
            elif kind == "listed":
                self._listed(request, payload)
            elif kind == "loaded":
                if isinstance(payload, tuple):      # a session: its data and its kernel
                    request.session, payload = payload
                request.loaded = payload
                self.loaded.emit(request)    # the session adopts it (connected directly)
                self._finish(request)
            elif kind == "failed":
                request.error = payload
                self._finish(request)
        if self.current is None and self._out.empty():
            self._poll.stop()

    def _listed(self, request: LoadRequest, listing: KernelList) -> None:
        request.listing = listing
        kernel = listing.chosen
        if kernel is None:
            self._stage(request, f"{len(listing.names)} kernels in {request.path.name}: choose one")
            # Asked here, on the UI thread, while nothing else of this load runs; the dialog's
            # own event loop keeps the window painting.
            kernel = request.choose(list(listing.names)) if request.choose is not None else None
            if request is not self.current or request.cancelled:
                return                       # cancelled (or replaced) while the dialog was open
            kernel = kernel or listing.names[0]
        self._stage(request, f"Parsing {_short(kernel)} of {request.path.name} "
                             f"({len(listing.names)} kernel{'s' if len(listing.names) != 1 else ''} in the file)")
        request.kernel = kernel
        self._spawn(request, self._load_step)

    def _finish(self, request: LoadRequest) -> None:
        if request is self.current:
            self.current = None
            self.busyChanged.emit(False)
        request.finished = True
        self.finished.emit(request)
        if request.on_done is not None:
            request.on_done(request)

    # ------------------------------------------------------------------ worker threads

    def _run(self, request: LoadRequest, step: Callable[[LoadRequest], Any]) -> None:
        try:
            step(request)
        except Cancelled:
            return
        except WarplineError as exc:
            self._out.put((request, "failed", exc))
        except Exception:   # a bug: shown rather than lost in a thread
            self._out.put((request, "failed", WarplineError("internal error:\n" + traceback.format_exc())))

    def _index_step(self, request: LoadRequest) -> None:
        listing = list_kernels(request.path, request.kernel, request._flag.is_set,
                               ask=request.origin == "baseline" and request.choose is not None)
        self._out.put((request, "listed", listing))

    def _load_step(self, request: LoadRequest) -> None:
        assert request.listing is not None and request.kernel is not None
        profile = request.profile if request.origin == "baseline" else None
        loaded = load_kernel(request.path, request.listing, request.kernel, request._flag.is_set, profile,
                             lambda fraction: self._out.put((request, "progress", fraction)))
        self._out.put((request, "loaded", loaded))

    def _session_step(self, request: LoadRequest) -> None:
        self._out.put((request, "loaded", load_session_file(request.path, request.session, request._flag.is_set)))


def _short(kernel: str) -> str:
    name = display_name(kernel)
    return name if len(name) <= 60 else name[:57] + "..."


__all__ = ["Cancelled", "KernelList", "LoadRequest", "Loaded", "PtxLoader", "list_kernels", "load_kernel",
           "load_session_file"]
