"""The pinned baseline: one finished evaluation the current result is compared with (Edit › Pin as
baseline). The chart draws its trace above the current one and the Compare tab lists both.

A session file keeps the baseline (``engine.session_file.StoredBaseline``: what it was computed
from, its label and the figures shown). Reopened, the stored figures are shown at once; the
baseline is then recomputed in the background when its PTX file still has the hash it had when
pinned, and otherwise stays as stored figures, which the window says. A baseline of another file
or kernel than the session's is loaded (indexed, only its kernel parsed) off the UI thread by a
:class:`gui.loader.PtxLoader` of its own before it is recomputed."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from engine.evaluation import Evaluation, state_for
from engine.evaluation.compare import BaselineFigures, figures_of
from engine.inputs import KernelInputs
from engine.names import display_name
from engine.session_file import StoredBaseline, ptx_sha256
from engine.state import WorkbenchState
from gui.loader import LoadRequest, PtxLoader

if TYPE_CHECKING:
    from gui.worker import ComputeWorker

RECOMPUTING = "stored figures, being recomputed"
NOT_RECOMPUTED = "stored figures, not recomputed"


class Baseline(QObject):
    # What to compare with: the pinned Evaluation, a stored baseline's BaselineFigures (until it
    # is recomputed, or for good when it cannot be), or None when cleared.
    changed = Signal(object)
    edited = Signal()               # the user pinned or cleared a baseline (an unsaved change)
    failedToCompare = Signal(str)   # a kernel opened as the comparison could not be loaded or evaluated

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.result: Evaluation | None = None
        self.label = ""
        self.note = ""                      # "" for a computed baseline, else why figures are stored
        self.stored: StoredBaseline | None = None   # what the shown baseline was restored from
        self.source: tuple[Path, str] | None = None  # PTX file and its SHA-256 of a pinned result
        self._others: tuple[StoredBaseline, ...] = ()   # further baselines of the session file
        self._worker: ComputeWorker | None = None   # made on the first recompute
        self._pending: int | None = None    # the worker's generation computing the stored baseline
        self._loader: PtxLoader | None = None   # loads a stored baseline's kernel, made when needed
        self._loading: LoadRequest | None = None   # that load, while it runs
        # a second kernel opened as the comparison (compare_with): its label while it loads and
        # computes, then what pin() needs
        self._comparison: str | None = None
        self._comparison_source: tuple[Path, str] | None = None
        self._like: WorkbenchState | None = None

    @property
    def shown(self) -> Evaluation | BaselineFigures | None:
        if self.result is not None:
            return self.result
        return self.stored.figures if self.stored is not None else None

    def pin(self, result: Evaluation, label: str, ptx_path: str | os.PathLike[str] | None = None,
            sha256: str = "") -> None:
        """Compare with ``result`` (computed from ``ptx_path``, whose hash was ``sha256``)."""
        self._pending = None       # (a comparison still being computed is dropped)
        self._stop_loading()
        self.result, self.label, self.note, self.stored = result, label, "", None
        self.source = (Path(ptx_path), sha256) if ptx_path is not None else None
        self.changed.emit(result)
        self.edited.emit()

    def compare_with(self, path: str | os.PathLike[str], profile: str | None = None, kernel: str | None = None,
                     choose: Callable[[list[str]], str | None] | None = None,
                     like: WorkbenchState | None = None) -> LoadRequest:
        """Open another kernel (of another file, or another version of this one) as the
        comparison: it is indexed and parsed off the UI thread (``choose`` asks which kernel when
        the file has several), evaluated on ``profile`` with its own launch in the background,
        and then shown as the baseline is. ``like``: the current state; a version of the same
        kernel (same name, so the same parameters) runs its launch and occupancy, so that only
        the code differs. A failure is reported by ``failedToCompare``; the old comparison stays."""
        self._pending = None
        self._stop_loading()
        if self._loader is None:
            self._loader = PtxLoader(self)
            self._loader.finished.connect(self._loaded)
        self._comparison = ""
        self._like = like
        self._loading = self._loader.start(LoadRequest(Path(path), kernel=kernel, origin="baseline",
                                                       profile=profile, choose=choose))
        return self._loading

    def clear(self) -> None:
        if self.comparing:             # a comparison still being opened: dropped
            self._pending = None
            self._stop_loading()
        if self.result is not None or self.stored is not None:
            self._pending = None
            self._stop_loading()
            self.result, self.label, self.note, self.stored, self.source = None, "", "", None, None
            self.changed.emit(None)
            self.edited.emit()

    # ------------------------------------------------------------------ sessions

    def entries(self) -> tuple[StoredBaseline, ...]:
        """The baselines a session file stores: the shown one last."""
        current: StoredBaseline | None = None
        if self.result is not None and self.source is not None:
            path, sha = self.source
            current = StoredBaseline(self.label, path, sha, self.result.state, figures_of(self.result))
        elif self.result is not None and self.stored is not None:      # recomputed from the session
            current = StoredBaseline(self.label, self.stored.ptx_path, self.stored.ptx_sha256,
                                     self.stored.state, figures_of(self.result))
        elif self.stored is not None:
            current = self.stored
        return self._others + ((current,) if current is not None else ())

    def restore(self, entries: tuple[StoredBaseline, ...], inputs: KernelInputs | None = None,
                sha256: str = "") -> None:
        """Show an opened session's baselines: the last one's stored figures at once, recomputed
        when its PTX is unchanged. ``inputs``/``sha256``: the session's own kernel, reused when
        the baseline was made on the same file, kernel and hash (no second parse)."""
        self._pending = None
        self._stop_loading()
        self.result, self.source = None, None
        if not entries:
            self._others, self.stored, self.label, self.note = (), None, "", ""
            self.changed.emit(None)
            return
        *others, entry = entries
        self._others, self.stored, self.label = tuple(others), entry, entry.label
        why, baseline_inputs = self._recompute_inputs(entry, inputs, sha256)
        load = not why and baseline_inputs is None
        self.note = RECOMPUTING if not why else f"{NOT_RECOMPUTED}: {why}"
        self.changed.emit(entry.figures)
        if baseline_inputs is not None:
            self._recompute(baseline_inputs, entry)
        elif load:
            self._load(entry)

    def _recompute_inputs(self, entry: StoredBaseline, inputs: KernelInputs | None,
                          sha256: str) -> tuple[str, KernelInputs | None]:
        """("", the session's inputs) when the baseline was made on them; ("", None) when its
        kernel must be loaded; (why, None) when it cannot be recomputed."""
        path = entry.ptx_path
        try:
            now = ptx_sha256(path)
        except OSError as exc:
            return f"cannot read {path}: {exc.strerror or exc}", None
        if now != entry.ptx_sha256:
            return f"{path.name} changed since the baseline was pinned", None
        if inputs is not None and sha256 == now and inputs.kernel_name == entry.state.kernel and \
                inputs.path.resolve() == path.resolve():
            return "", inputs
        return "", None

    def _load(self, entry: StoredBaseline) -> None:
        """Load the baseline's kernel off the UI thread, then recompute it."""
        if self._loader is None:
            self._loader = PtxLoader(self)
            self._loader.finished.connect(self._loaded)
        self._loading = self._loader.start(LoadRequest(entry.ptx_path, kernel=entry.state.kernel,
                                                       origin="baseline", profile=entry.state.profile))

    def _loaded(self, request: LoadRequest) -> None:
        if request is self._loading and self._comparison is not None:
            self._comparison_loaded(request)
            return
        entry = self.stored
        if request is not self._loading or request.cancelled or entry is None:
            return
        self._loading = None
        if request.loaded is not None and request.loaded.sha256 == entry.ptx_sha256:
            self._recompute(request.loaded.inputs, entry)
            return
        why = (f"{entry.ptx_path.name} changed since the baseline was pinned" if request.loaded is not None
               else str(request.error or "not loaded").splitlines()[0])
        self.note = f"{NOT_RECOMPUTED}: {why}"
        self.changed.emit(self.shown)

    def _stop_loading(self) -> None:
        """Stop a load in progress; a comparison being opened is dropped with it (compare_with
        starts its own afterwards)."""
        self._comparison = None
        self._loading = None
        if self._loader is not None:
            self._loader.cancel()

    def _comparison_loaded(self, request: LoadRequest) -> None:
        self._loading = None
        if request.cancelled or request.loaded is None:
            self._comparison = None
            if request.error is not None:
                self.failedToCompare.emit(f"Cannot compare with {request.path.name}: {request.error}")
            return
        inputs = request.loaded.inputs
        self._comparison = f"{inputs.path.name} [{display_name(inputs.kernel_name).split('(')[0]}]"
        self._comparison_source = (inputs.path, request.loaded.sha256)
        state = state_for(inputs)
        like = self._like
        if like is not None and like.kernel == inputs.kernel_name and like.launch != state.launch:
            state = replace(state, launch=like.launch, occupancy=like.occupancy, policy=like.policy,
                            launch_source="the current kernel's launch")
        self._submit(inputs, state)

    def _recompute(self, inputs: KernelInputs, entry: StoredBaseline) -> None:
        self._comparison = None
        self._submit(inputs, entry.state)

    def _submit(self, inputs: KernelInputs, state: WorkbenchState) -> None:
        if self._worker is None:
            from gui.worker import ComputeWorker

            self._worker = ComputeWorker(parent=self)
            self._worker.sweep_enabled = False      # the comparison reads no curves
            self._worker.resultReady.connect(self._recomputed)
            self._worker.failed.connect(self._failed)
        self._pending = self._worker.submit(inputs, state)

    def _recomputed(self, result: Evaluation) -> None:
        if self._pending is None or self._worker is None or self._pending != self._worker.generation:
            return
        self._pending = None
        if self._comparison:
            label, (path, sha) = self._comparison, self._comparison_source or (None, "")
            self._comparison, self._comparison_source = None, None
            self.pin(result, label, path, sha)
            return
        self.result, self.note = result, ""
        self.changed.emit(result)

    def _failed(self, message: str) -> None:
        if self._pending is None:
            return
        self._pending = None
        if self._comparison:
            label, self._comparison = self._comparison, None
            self.failedToCompare.emit(f"Cannot compare with {label}: {message.splitlines()[0]}")
            return
        self.note = f"{NOT_RECOMPUTED}: {message.splitlines()[0]}"
        self.changed.emit(self.shown)

    @property
    def recomputing(self) -> bool:
        return self._pending is not None or self._loading is not None

    @property
    def comparing(self) -> bool:
        """A kernel opened as the comparison is still loading or being evaluated."""
        return self._comparison is not None

    def shutdown(self) -> None:
        self._stop_loading()
        if self._worker is not None:
            self._worker.stop()
