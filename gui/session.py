"""The session: the one model object of the window.

It owns the opened kernel (``KernelInputs``), the user's :class:`WorkbenchState`, the undo stack,
the latest evaluation, the debounce timer, the background worker and the autosave timer. Views call
:meth:`apply` to change the state (one undoable command each) and redraw on the signals below, one
per part of the evaluation (timeline, models, derivation, sweep); they never change each other and
never look at how far an evaluation has got.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QElapsedTimer, QObject, QTimer, Signal
from PySide6.QtGui import QUndoStack

from engine.errors import WarplineError
from engine.evaluation import PART_DERIVATION, PART_MODELS, PART_SWEEP, PART_TIMELINE, Evaluation, state_for
from engine.evaluation.core import PART_ASSUMPTIONS
from engine.inputs import KernelInputs, resolve_inputs
from engine.ptx.parsed_module import Module
from engine.session_file import (
    Fingerprint,
    Orphan,
    SessionData,
    StoredBaseline,
    autosave_path,
    check_fingerprint,
    check_launch,
    claim_orphan,
    current_owner,
    fingerprint_for,
    load_session,
    new_session_id,
    ptx_sha256,
    save_session,
    unclaim_orphan,
)
from engine.state import WorkbenchState
from gui.loader import Loaded, LoadRequest, PtxLoader, load_session_file
from gui.undo import StateCommand
from gui.worker import ComputeWorker

# One 60 Hz frame. A lone edit computes at once; edits that follow within this interval (a slider
# drag, a held key) are coalesced: the newest state is computed when the interval ends.
DEBOUNCE_MS = 16
AUTOSAVE_MS = 5000


class Session(QObject):
    fileChanged = Signal()              # a new PTX file / kernel is open (tables change shape)
    stateChanged = Signal(object)       # WorkbenchState
    # One signal per part of an evaluation, each with the Evaluation that carries it (a later
    # part's evaluation also carries the earlier parts of the same state).
    timelineChanged = Signal(object)    # simulation, trace and lane layout; analysis and occupancy
    modelsChanged = Signal(object)      # every model's figures (Evaluation.models)
    derivationChanged = Signal(object)  # Many-BSP: BLOCK table, supersteps, derivation
    sweepChanged = Signal(object)       # the occupancy sweep
    assumptionsChanged = Signal(object)  # how far each assumed input moves the headline figure
    evaluationFinished = Signal(object)  # every part of the state is in (errors, warnings final)
    computeFailed = Signal(str)
    busyChanged = Signal(bool)          # an evaluation started (True) or the last one ended (False)
    progress = Signal(float, str)       # (fraction done, the stage running) of the evaluation
    dirtyChanged = Signal(bool)
    baselinesLoaded = Signal(object)    # tuple of StoredBaseline: an opened session's baselines

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.inputs: KernelInputs | None = None
        self.state: WorkbenchState | None = None
        self.result: Evaluation | None = None
        self.session_path: Path | None = None
        self.undo_stack = QUndoStack(self)
        # A bound slot (not a lambda): Qt drops it when the session dies before the stack.
        self.undo_stack.cleanChanged.connect(self._clean_changed)
        self.worker = ComputeWorker(parent=self)
        self._part_signals = {PART_TIMELINE: self.timelineChanged, PART_MODELS: self.modelsChanged,
                              PART_DERIVATION: self.derivationChanged, PART_SWEEP: self.sweepChanged,
                              PART_ASSUMPTIONS: self.assumptionsChanged}
        self.worker.partReady.connect(self._on_part)
        self.worker.resultReady.connect(self._on_finished)
        self.worker.failed.connect(self.computeFailed)
        self.worker.busyChanged.connect(self.busyChanged)
        self.worker.progress.connect(self.progress)
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(DEBOUNCE_MS)
        self._debounce.timeout.connect(self.recompute_now)
        self._since_submit = QElapsedTimer()     # time since the last submission to the worker
        self._autosave = QTimer(self)
        self._autosave.setInterval(AUTOSAVE_MS)
        self._autosave.timeout.connect(self.autosave)
        self._autosaved_index = -1
        # Each window autosaves to a file of its own, which only it deletes (see engine.session_file).
        self.session_id = new_session_id()
        self.autosave_path = autosave_path(self.session_id)
        self._ptx_sha256 = ""
        self._drag_serial = 0
        # The pinned baselines, as the session file stores them (the window keeps them current).
        self.baselines: tuple[StoredBaseline, ...] = ()
        self._baselines_serial = 0
        self._autosaved_key: tuple[int, int] = (-1, -1)
        # Every kernel of the open file (the file may have been parsed for one kernel only).
        self.kernel_names: tuple[str, ...] = ()
        # Opening off the UI thread (gui/loader.py): the session changes only when a load succeeds.
        self.loader = PtxLoader(self)
        self.loader.loaded.connect(self._loaded)
        self.loader.finished.connect(self._load_finished)
        # Autosaves claimed by a restore still loading: request -> (the orphan, its new path).
        self._claims: dict[LoadRequest, tuple[Orphan, Path]] = {}
        # The edit history a restored autosave brought (its window's undo texts): kept in this
        # window's autosaves ahead of its own, so that a second crash still says what was done.
        self._restored_edits: tuple[str, ...] = ()

    # ------------------------------------------------------------------ opening

    def _clean_changed(self, clean: bool) -> None:
        self.dirtyChanged.emit(not clean)

    @property
    def dirty(self) -> bool:
        return not self.undo_stack.isClean()

    def open_ptx(self, path: str | os.PathLike[str], kernel: str | None = None,
                 state: WorkbenchState | None = None, module: Module | None = None) -> None:
        """Parse ``path`` (unless ``module`` is it, parsed) and make it the session. On any
        WarplineError (malformed PTX with its file:line:column, unknown kernel, bad launch file)
        nothing changes and the error rises."""
        inputs = resolve_inputs(path, kernel=kernel or (state.kernel if state else None), module=module,
                                profile=state.profile if state is not None else None)
        self._adopt(inputs, state or state_for(inputs), self._hash(inputs.path))

    @property
    def ptx_sha256(self) -> str:
        """The SHA-256 of the open PTX file, as it was when opened."""
        return self._ptx_sha256

    def set_baselines(self, baselines: tuple[StoredBaseline, ...]) -> None:
        """The baselines the session file stores (the window's pinned one)."""
        if baselines != self.baselines:
            self.baselines = tuple(baselines)
            self._baselines_serial += 1

    def mark_unsaved(self) -> None:
        """Something the undo stack does not hold changed (a baseline pinned or cleared): the
        session has unsaved changes until it is saved."""
        if self.inputs is not None:
            self.undo_stack.resetClean()

    def _hash(self, path: Path) -> str:
        try:
            return ptx_sha256(path)
        except OSError as exc:
            raise WarplineError(f"{path}: cannot read the PTX file: {exc.strerror or exc}") from None

    def open_loaded(self, loaded: Loaded, state: WorkbenchState | None = None) -> None:
        """Make a kernel that :mod:`gui.loader` parsed (alone) the session."""
        self._adopt(loaded.inputs, state or state_for(loaded.inputs), loaded.sha256, loaded.kernels)

    def open_ptx_async(self, path: str | os.PathLike[str], kernel: str | None = None,
                       choose: Callable[[list[str]], str | None] | None = None,
                       on_done: Callable[[LoadRequest], None] | None = None) -> LoadRequest:
        """Start opening ``path`` off the UI thread: index it, ask ``choose`` which kernel when it
        has several and nothing names one, parse and resolve only that kernel. The session
        changes when the load succeeds; ``loader.finished`` (and ``on_done``) report the outcome,
        also a failure or a cancel, which leave the session as it was."""
        return self.loader.start(LoadRequest(Path(path), kernel=kernel, choose=choose, on_done=on_done))

    def cancel_load(self) -> bool:
        """Stop the load in progress, if any (the session stays as it was)."""
        return self.loader.cancel()

    @property
    def loading(self) -> bool:
        return self.loader.busy

    def _loaded(self, request: LoadRequest) -> None:
        assert request.loaded is not None
        if request.origin in ("session", "restore"):
            assert request.session is not None
            adopt = self._adopt_restored if request.origin == "restore" else self._adopt_session
            request.notes = adopt(request.path, request.session, request.loaded)
            return
        self.open_loaded(request.loaded)
        if request.profile is not None and self.state is not None and self.state.profile != request.profile:
            self.state = replace(self.state, profile=request.profile)
            self.stateChanged.emit(self.state)
            self.recompute_now()

    def _adopt(self, inputs: KernelInputs, new_state: WorkbenchState, sha256: str,
               kernels: tuple[str, ...] | None = None) -> None:
        self.kernel_names = kernels if kernels is not None else tuple(k.name for k in inputs.module.kernels)
        self.inputs = inputs
        self.state = new_state
        self._ptx_sha256 = sha256
        self.result = None
        self.session_path = None
        self.undo_stack.clear()
        self.undo_stack.setClean()
        self._autosaved_index = -1
        self._restored_edits = ()
        self.fileChanged.emit()
        self.stateChanged.emit(new_state)
        self.recompute_now()
        self._autosave.start()

    def open_session(self, path: str | os.PathLike[str]) -> list[str]:
        """Open a session file and return once it is open (scripts, tests); returns what no longer
        matches the PTX (overrides of rows whose instruction changed are named there and not
        applied). Only the session's kernel is parsed. The window uses :meth:`open_session_async`."""
        data, loaded = load_session_file(Path(path))
        return self._adopt_session(Path(path), data, loaded)

    def open_session_async(self, path: str | os.PathLike[str],
                           on_done: Callable[[LoadRequest], None] | None = None,
                           ptx: str | os.PathLike[str] | None = None) -> LoadRequest:
        """Start opening a session file off the UI thread (read, index its PTX, parse and resolve
        only its kernel), with the loader's progress and cancel as for a PTX file. The session
        changes when the load succeeds; the request's ``notes`` then say what no longer matches.
        ``ptx``: the session's PTX file where the user located it (the session's own is missing);
        it is checked against the session's fingerprint like any other."""
        data = None
        if ptx is not None:
            data = replace(load_session(Path(path)), ptx_path=Path(ptx).resolve(), moved_from=None)
        return self.loader.start(LoadRequest(Path(path), origin="session", session=data, on_done=on_done))

    def _adopt_session(self, path: Path, data: SessionData, loaded: Loaded) -> list[str]:
        state, notes = check_fingerprint(data, loaded.inputs, loaded.sha256)
        state, launch_notes = check_launch(state, loaded.inputs)
        notes += launch_notes
        if data.moved_from is not None:
            notes.append(f"its PTX file was not at {data.moved_from}: opened {loaded.inputs.path}, found "
                         "beside the session")
        self._adopt(loaded.inputs, state, loaded.sha256, loaded.kernels)
        self.session_path = path
        if notes and state != data.state:
            self.undo_stack.resetClean()   # dropped edits: what is shown is not what is saved
        self.set_baselines(data.baselines)
        self.baselinesLoaded.emit(data.baselines)
        return notes

    def restore(self, orphan: Orphan) -> list[str]:
        """Take over an autosave left by a dead process and open it as unsaved work of this
        window (the title shows it, closing asks), returning once it is open. Returns the
        fingerprint notes. When it cannot be opened the autosave goes back where it was, to be
        offered again at the next start, and the WarplineError rises."""
        claimed = self._claim(orphan)
        try:
            data, loaded = load_session_file(claimed, orphan.data)
        except BaseException:
            self._unclaim(orphan, claimed)
            raise
        return self._adopt_restored(claimed, data, loaded)

    def restore_async(self, orphan: Orphan, on_done: Callable[[LoadRequest], None] | None = None) -> LoadRequest:
        """:meth:`restore` off the UI thread: the autosave is claimed at once (WarplineError when
        another window took it first), then loaded as a session file is. A failed or cancelled
        load puts the autosave back where it was, so it is offered again at the next start."""
        claimed = self._claim(orphan)
        request = LoadRequest(claimed, origin="restore", session=orphan.data, on_done=on_done)
        self._claims[request] = (orphan, claimed)
        return self.loader.start(request)

    def _claim(self, orphan: Orphan) -> Path:
        """Rename the orphan to this window's autosave and mark this process its owner at once, so
        that no other Warpline offers it while it loads (it is an orphan again if this process
        dies before the restore finishes)."""
        claimed = claim_orphan(orphan, self.session_id)
        data = orphan.data
        edits = data.owner.edits if data.owner is not None else ()
        try:
            save_session(claimed, data.ptx_path, data.state, fingerprint=data.fingerprint,
                         owner=current_owner(self.session_id, edits), baselines=data.baselines)
        except OSError:
            pass    # still claimed by name; only the owner field names the dead process
        return claimed

    def _unclaim(self, orphan: Orphan, claimed: Path) -> None:
        if not unclaim_orphan(orphan, claimed):
            # It stays where it is, under this window's name: the window takes a new name, so
            # that its own autosaves and its clean close never touch that unsaved work.
            self.session_id = new_session_id()
            self.autosave_path = autosave_path(self.session_id)

    def _adopt_restored(self, claimed: Path, data: SessionData, loaded: Loaded) -> list[str]:
        notes = self._adopt_session(claimed, data, loaded)
        self._restored_edits = data.owner.edits if data.owner is not None else ()
        self.session_path = None          # "Save" must ask where, not overwrite the autosave
        self.undo_stack.resetClean()      # restored work is unsaved work
        self.autosave()                   # the file now names this process as its owner
        return notes

    def _load_finished(self, request: LoadRequest) -> None:
        claim = self._claims.pop(request, None)
        if claim is not None and not request.ok:
            self._unclaim(*claim)         # not restored: offered again at the next start

    def save(self, path: str | os.PathLike[str]) -> Path:
        if self.inputs is None or self.state is None:
            raise WarplineError("nothing to save: no kernel is open")
        written = save_session(path, self.inputs.path, self.state, fingerprint=self._fingerprint(),
                               baselines=self.baselines)
        self.session_path = written
        self.undo_stack.setClean()
        return written

    def _fingerprint(self) -> Fingerprint:
        assert self.inputs is not None and self.state is not None
        return fingerprint_for(self.inputs, self.state, self._ptx_sha256)

    def autosave(self) -> None:
        """Write this window's recovery file when something changed since the last autosave."""
        if self.inputs is None or self.state is None or not self.dirty:
            return
        key = (self.undo_stack.index(), self._baselines_serial)
        if key == self._autosaved_key and self._autosaved_index >= 0 and self.autosave_path.is_file():
            return
        try:
            save_session(self.autosave_path, self.inputs.path, self.state, fingerprint=self._fingerprint(),
                         owner=current_owner(self.session_id, self.edit_history()), baselines=self.baselines)
            self._autosaved_index = self.undo_stack.index()
            self._autosaved_key = key
        except OSError:
            pass  # autosave is best effort; the next tick retries

    def edit_history(self) -> list[str]:
        """The edits in effect, oldest first, as the undo history names them (with those of the
        autosave this window restored, if any)."""
        stack = self.undo_stack
        return [*self._restored_edits, *(stack.text(i) for i in range(stack.index()))]

    def discard_recovery(self) -> None:
        """Delete this window's own autosave (after a save or an explicit discard); the next
        change writes it again."""
        self._autosaved_index = -1
        try:
            self.autosave_path.unlink()
        except FileNotFoundError:
            pass

    # ------------------------------------------------------------------ editing

    def apply(self, new_state: WorkbenchState, text: str, merge_key: str | None = None) -> None:
        """Make ``new_state`` current as one undoable step (merged by ``merge_key``)."""
        if self.state is None or new_state == self.state:
            return
        self.undo_stack.push(StateCommand(self, self.state, new_state, text, merge_key))

    def new_drag_key(self, what: str) -> str:
        """A merge key for one continuous gesture (a slider drag)."""
        self._drag_serial += 1
        return f"{what}#{self._drag_serial}"

    def set_state(self, state: WorkbenchState) -> None:
        """Called by undo commands only."""
        self.state = state
        if self._debounce.isActive():
            pass         # a burst in progress: the pending timer computes the newest state
        elif self._since_submit.isValid() and self._since_submit.elapsed() < DEBOUNCE_MS:
            self._debounce.start()
        else:
            self.recompute_now()
        # The views follow the new state while the worker computes it (submitted first: the
        # simulation runs without the GIL, beside these updates).
        self.stateChanged.emit(state)

    def set_profile(self, name: str) -> None:
        """Make the GPU profile ``name`` (a profile's name or a TOML file) current as one undoable
        step. It is loaded and validated first, by the evaluator that will use it: a broken file
        raises :class:`WarplineError` and leaves the state as it was."""
        if self.state is None:
            return
        self.worker.evaluator.profile(name)
        self.apply(replace(self.state, profile=name), f"Profile {name}")

    def set_kernel(self, kernel: str) -> None:
        """Switch to another kernel of the same file (its own launch; clears undo)."""
        if self.inputs is None or self.state is None or kernel == self.state.kernel:
            return
        profile = self.state.profile
        if all(k.name != kernel for k in self.inputs.module.kernels):
            # Only the open kernel was parsed: this one is parsed off the UI thread (the outcome
            # comes as loader.finished, as for a file).
            self.loader.start(LoadRequest(self.inputs.path, kernel=kernel, origin="kernel", profile=profile))
            return
        # The open file's parse is reused: a 25,000-line PTX takes most of a second to parse.
        self.open_ptx(self.inputs.path, kernel=kernel, module=self.inputs.module)
        if self.state is not None and self.state.profile != profile:
            self.state = replace(self.state, profile=profile)
            self.stateChanged.emit(self.state)
            self.recompute_now()

    # ------------------------------------------------------------------ computing

    def recompute_now(self) -> None:
        self._debounce.stop()
        if self.inputs is not None and self.state is not None:
            self._since_submit.start()
            self.worker.submit(self.inputs, self.state)

    @property
    def busy(self) -> bool:
        """Whether an evaluation is running."""
        return self.worker.busy

    def timeline_painted(self) -> None:
        """The window has shown the latest timeline: the evaluation goes on with its next part
        (the occupancy sweep waits for it; see ``ComputeWorker.partial_painted``)."""
        self.worker.partial_painted()

    def _on_part(self, evaluation: Evaluation, parts: tuple[str, ...]) -> None:
        # A result for an older state can still arrive between an edit and its debounce firing.
        if evaluation.state != self.state:
            return
        self.result = evaluation
        for part in parts:
            self._part_signals[part].emit(evaluation)

    def _on_finished(self, evaluation: Evaluation) -> None:
        if evaluation.state != self.state:
            return
        self.result = evaluation
        self.evaluationFinished.emit(evaluation)

    def shutdown(self) -> None:
        self.loader.cancel()
        self._autosave.stop()
        self._debounce.stop()
        self.worker.stop()
