"""Inputs panel: kernel, GPU profile, launch (grid, block, shared memory, registers, argument values,
loop trip counts), occupancy and scheduler policy.

The panel shows the session's state and result; each user change becomes one undoable state change
through ``Session.apply``. Refused input (a malformed grid, a negative trip count) is reported
through ``message`` with the reason and does not touch the state.
"""

from __future__ import annotations

import html
from dataclasses import replace

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHeaderView,
    QLabel,
    QLineEdit,
    QSizePolicy,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from engine.errors import LaunchError, WarplineError
from engine.evaluation import Evaluation
from engine.launch import argument_value, parse_dim
from engine.names import display_name
from engine.profiles import list_profiles
from engine.state import POLICIES, WorkbenchState, parse_count
from gui.glossary import set_header_tips
from gui.panels.occupancy import OccupancyControl
from gui.session import Session
from gui.theme import brush
from gui.theme import current as current_theme

OPEN_PROFILE = "Open profile file…"
POLICY_TITLES = {"lrr": "loose round-robin (LRR)", "gto": "greedy-then-oldest (GTO)"}


def _dim_text(dim: tuple[int, int, int]) -> str:
    return ",".join(str(x) for x in dim)


def _short_param(name: str, kernel: str) -> str:
    return name.removeprefix(kernel + "_")


class InputsPanel(QWidget):
    message = Signal(str)   # a reason to show in the status bar

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self._updating = False

        self.kernel_combo = QComboBox()
        self.kernel_combo.setObjectName("kernelCombo")
        self.profile_combo = QComboBox()
        self.profile_combo.setObjectName("profileCombo")
        self.grid_edit = QLineEdit()
        self.grid_edit.setObjectName("gridEdit")
        self.block_edit = QLineEdit()
        self.block_edit.setObjectName("blockEdit")
        for edit in (self.grid_edit, self.block_edit):
            edit.setToolTip("X[,Y,Z], e.g. 43,43,1")
        self.smem_spin = QSpinBox()
        self.smem_spin.setRange(0, 1 << 20)
        self.smem_spin.setSuffix(" B")
        self.smem_spin.setKeyboardTracking(False)
        self.regs_spin = QSpinBox()
        self.regs_spin.setRange(0, 255)
        self.regs_spin.setKeyboardTracking(False)
        self.policy_combo = QComboBox()
        for p in POLICIES:
            self.policy_combo.addItem(POLICY_TITLES.get(p, p), p)
        self.occupancy = OccupancyControl()
        # Widths must not follow the contents (a long demangled kernel name, the registers' source,
        # a profile path): the dock would change width after an edit and the other panels jump.
        for combo in (self.kernel_combo, self.profile_combo, self.policy_combo):
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(10)
        for spin in (self.smem_spin, self.regs_spin):
            spin.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
            spin.setMinimumWidth(120)

        self.args_table = QTableWidget(0, 3)
        self.args_table.setObjectName("argsTable")
        self.args_table.setHorizontalHeaderLabels(["parameter", "type", "value"])
        self.loops_table = QTableWidget(0, 4)
        self.loops_table.setObjectName("loopsTable")
        self.loops_table.setHorizontalHeaderLabels(["loop", "depth", "inferred", "trip count"])
        set_header_tips(self.args_table, (
            "The kernel's parameter, as the PTX declares it (hover a name for the full symbol).",
            "Its PTX type; a pointer shows as u64 *.",
            "Its value in this launch (from the launch file, or typed here): loop trip counts and addresses "
            "that depend on it are computed from it."))
        set_header_tips(self.loops_table, (
            "The loop, by the label of its header block in the PTX.",
            "How deeply it is nested (1: an outermost loop).",
            "The trip count read from the PTX and the arguments (hover a cell for how), or unknown.",
            "The trip count the models use: the inferred one unless you type another (clear the cell to go back)."))
        for table in (self.args_table, self.loops_table):
            table.verticalHeader().setVisible(False)
            table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
            table.horizontalHeader().setStretchLastSection(True)
            table.setMinimumHeight(90)

        kernel_box = QGroupBox("Kernel and GPU")
        form = QFormLayout(kernel_box)
        form.addRow("Kernel", self.kernel_combo)
        form.addRow("GPU profile", self.profile_combo)
        launch_box = QGroupBox("Launch")
        lform = QFormLayout(launch_box)
        lform.addRow("Grid", self.grid_edit)
        lform.addRow("Block", self.block_edit)
        lform.addRow("Dynamic smem", self.smem_spin)
        lform.addRow("Registers", self.regs_spin)
        self.launch_source = QLabel()
        self.launch_source.setObjectName("launchSource")
        self.launch_source.setWordWrap(True)
        lform.addRow(self.launch_source)
        occ_box = QGroupBox("Occupancy and scheduling")
        oform = QVBoxLayout(occ_box)
        oform.addWidget(self.occupancy)
        oform.addWidget(self.policy_combo)
        args_box = QGroupBox("Argument values")
        QVBoxLayout(args_box).addWidget(self.args_table)
        loops_box = QGroupBox("Loop trip counts")
        QVBoxLayout(loops_box).addWidget(self.loops_table)

        layout = QVBoxLayout(self)
        for box in (kernel_box, launch_box, occ_box, args_box, loops_box):
            layout.addWidget(box)
        layout.addStretch(1)

        self.kernel_combo.activated.connect(self._kernel_chosen)
        self.profile_combo.activated.connect(self._profile_chosen)
        self.grid_edit.editingFinished.connect(lambda: self._dim_edited("grid", self.grid_edit))
        self.block_edit.editingFinished.connect(lambda: self._dim_edited("block", self.block_edit))
        self.smem_spin.valueChanged.connect(self._smem_edited)
        self.regs_spin.valueChanged.connect(self._regs_edited)
        self.policy_combo.activated.connect(self._policy_chosen)
        self.occupancy.occupancyEdited.connect(self._occupancy_edited)
        self.args_table.itemChanged.connect(self._arg_edited)
        self.loops_table.itemChanged.connect(self._trip_edited)

        self._profiles_for: str | None = None     # the profile the list was last made for
        session.fileChanged.connect(self._file_changed)
        session.stateChanged.connect(self.show_state)
        session.timelineChanged.connect(self.show_result)

    # ------------------------------------------------------------------ showing

    def _file_changed(self) -> None:
        self._profiles_for = None        # list the profile files again for a new file
        inputs = self.session.inputs
        if inputs is None:
            return
        self._updating = True
        self.kernel_combo.clear()
        # every kernel of the file (only the open one may have been parsed)
        names = self.session.kernel_names or tuple(k.name for k in inputs.module.kernels)
        for name in names:
            self.kernel_combo.addItem(display_name(name), name)
            self.kernel_combo.setItemData(self.kernel_combo.count() - 1, name, Qt.ItemDataRole.ToolTipRole)
        self.kernel_combo.setEnabled(len(names) > 1)
        # the full demangled name and the mangled one on hover: the box itself is elided
        self.kernel_combo.setToolTip(f"{display_name(inputs.kernel_name)}\n{inputs.kernel_name}")
        kernel = inputs.kernel_name
        self.args_table.setRowCount(len(inputs.function.params))
        for i, p in enumerate(inputs.function.params):
            name = QTableWidgetItem(_short_param(p.name, kernel))
            name.setToolTip(p.name)
            kind = QTableWidgetItem(p.type + (" *" if p.type in ("u64", "b64") else ""))
            for item in (name, kind):
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
            self.args_table.setItem(i, 0, name)
            self.args_table.setItem(i, 1, kind)
            self.args_table.setItem(i, 2, QTableWidgetItem(""))
        regs = inputs.resources.registers
        self.regs_spin.setSpecialValueText(f"auto ({regs}, {inputs.resources.source})")
        self._updating = False

    def show_state(self, state: WorkbenchState) -> None:
        self._updating = True
        try:
            idx = self.kernel_combo.findData(state.kernel)
            self.kernel_combo.setCurrentIndex(idx)
            if state.profile != self._profiles_for:
                self._fill_profiles(state.profile)      # lists the profile files: not on every edit
            else:
                self.profile_combo.setCurrentIndex(max(0, self.profile_combo.findData(state.profile)))
            if not self.grid_edit.hasFocus():
                self.grid_edit.setText(_dim_text(state.launch.grid))
            if not self.block_edit.hasFocus():
                self.block_edit.setText(_dim_text(state.launch.block))
            self.smem_spin.setValue(state.launch.smem_dynamic)
            self.regs_spin.setValue(state.launch.regs_per_thread or 0)
            self.policy_combo.setCurrentIndex(max(0, self.policy_combo.findData(state.policy)))
            source = state.launch_source or "set in the window"
            self.launch_source.setText(f"<small>Launch: {html.escape(source)}</small>")
            self.launch_source.setToolTip(source)
            args = state.launch.args
            inputs = self.session.inputs
            for i in range(self.args_table.rowCount()):
                name = inputs.function.params[i].name if inputs is not None else ""
                value = args.get(i, args.get(name, args.get(_short_param(name, state.kernel))))
                item = self.args_table.item(i, 2)
                if item is not None:
                    item.setText("" if value is None else f"{value:g}")
        finally:
            self._updating = False

    def _fill_profiles(self, current: str) -> None:
        self._profiles_for = current
        names = list(list_profiles())
        items = names + ([current] if current not in names else [])
        if [self.profile_combo.itemData(i) for i in range(self.profile_combo.count() - 1)] != items:
            self.profile_combo.clear()
            for name in items:
                self.profile_combo.addItem(name, name)
            self.profile_combo.addItem(OPEN_PROFILE, None)
        self.profile_combo.setCurrentIndex(max(0, self.profile_combo.findData(current)))

    def _show_supplied(self, result: Evaluation) -> None:
        """Argument values the launch does not give: the value every model ran with, in italics
        (the derived colour when exact, the assumed one when a guess), the rule on hover."""
        completion = result.completion
        theme = current_theme(self.palette())
        for row in range(self.args_table.rowCount()):
            item = self.args_table.item(row, 2)
            if item is None:
                continue
            supplied = completion.supplied_for(row) if completion is not None else None
            font = item.font()
            if supplied is None or item.text() not in ("", f"{supplied.value:g}"):
                if font.italic():
                    font.setItalic(False)
                    item.setFont(font)
                    item.setForeground(self.args_table.palette().text())
                    item.setToolTip("")
                continue
            item.setText(f"{supplied.value:g}")
            font.setItalic(True)
            item.setFont(font)
            item.setForeground(theme.qcolor("derived_text" if supplied.certain else "assumed_text"))
            item.setToolTip(f"not given: {supplied.how} ({supplied.rule}); type the real value to give it")

    def show_result(self, result: Evaluation) -> None:
        self._updating = True
        try:
            self._show_supplied(result)
            self.occupancy.show_occupancy(result.occupancy, result.resident_blocks)
            if result.analysis is not None:
                loops = result.analysis.loop_info
                trips = result.state.launch.trip_overrides
                self.loops_table.setRowCount(len(loops))
                for k, loop in enumerate(loops):
                    inferred = result.inferred_trips.get(loop.key)
                    shown = "unknown" if inferred is None or inferred.value is None else str(inferred.value)
                    cells = [loop.key, str(loop.depth), shown,
                             str(trips[loop.key]) if loop.key in trips else shown]
                    for col, text in enumerate(cells):
                        item = QTableWidgetItem(text)
                        if col != 3:
                            item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
                        if col == 2 and inferred is not None:
                            item.setToolTip(inferred.reason or inferred.source)
                        if col == 3 and loop.key in trips:
                            font = item.font()
                            font.setBold(True)
                            item.setFont(font)
                            item.setBackground(brush("edited"))
                            item.setToolTip("overridden; clear the cell to use the inferred count")
                        elif col == 3 and shown == "unknown":
                            item.setBackground(brush("unknown"))
                            item.setToolTip("trip count unknown: the models assume 1 - type the real count")
                        self.loops_table.setItem(k, col, item)
        finally:
            self._updating = False

    # ------------------------------------------------------------------ editing

    def _apply(self, state: WorkbenchState, text: str, merge_key: str | None = None) -> None:
        self.session.apply(state, text, merge_key)

    def _kernel_chosen(self, index: int) -> None:
        name = self.kernel_combo.itemData(index)
        if name:
            try:
                self.session.set_kernel(name)
            except WarplineError as exc:
                self.message.emit(str(exc))

    def _profile_chosen(self, index: int) -> None:
        state = self.session.state
        if state is None:
            return
        name = self.profile_combo.itemData(index)
        if name is None:
            path, _ = QFileDialog.getOpenFileName(self, "Open GPU profile", "", "GPU profiles (*.toml)")
            if not path:
                self.show_state(state)
                return
            name = path
        try:
            self.session.set_profile(name)
        except WarplineError as exc:
            self.message.emit(str(exc))
            self.show_state(state)

    def _dim_edited(self, what: str, edit: QLineEdit) -> None:
        state = self.session.state
        if state is None or self._updating:
            return
        try:
            dim = parse_dim(edit.text(), what)
            new = state.with_launch(**{what: dim})
        except WarplineError as exc:
            t = current_theme(self.palette())
            edit.setStyleSheet(f"background: {t.rejected}; color: {t.chart_text}")
            edit.setToolTip(str(exc))
            self.message.emit(str(exc))
            return
        edit.setStyleSheet("")
        edit.setToolTip("X[,Y,Z], e.g. 43,43,1")
        if dim != getattr(state.launch, what):
            self._apply(new, f"Set {what} {_dim_text(dim)}")

    def _smem_edited(self, value: int) -> None:
        self._launch_change({"smem_dynamic": value}, f"Dynamic smem {value} B")

    def _regs_edited(self, value: int) -> None:
        self._launch_change({"regs_per_thread": value or None}, f"Registers {value or 'auto'}")

    def _launch_change(self, changes: dict, text: str) -> None:
        state = self.session.state
        if state is None or self._updating:
            return
        try:
            new = state.with_launch(**changes)
        except WarplineError as exc:
            self.message.emit(str(exc))
            self.show_state(state)
            return
        self._apply(new, text)

    def _policy_chosen(self, index: int) -> None:
        state = self.session.state
        if state is not None:
            self._apply(replace(state, policy=self.policy_combo.itemData(index)), "Scheduler policy")

    def _occupancy_edited(self, blocks: int, merge_key: str) -> None:
        state = self.session.state
        if state is None or self._updating:
            return
        self._apply(replace(state, occupancy=blocks), f"Occupancy {blocks} blocks/SM", merge_key or None)

    def _arg_edited(self, item: QTableWidgetItem) -> None:
        state = self.session.state
        if state is None or self._updating or item.column() != 2:
            return
        index = item.row()
        text = item.text().strip()
        args = {k: v for k, v in state.launch.args.items()
                if k != index and not (isinstance(k, str) and self._param_index(k) == index)}
        if text:
            try:
                value: int | float = int(text, 0)
            except ValueError:
                try:
                    value = float(text)
                except ValueError:
                    self.message.emit(f"argument {index}: {text!r} is not a number")
                    self.show_state(state)
                    return
            inputs = self.session.inputs
            if inputs is not None and index < len(inputs.function.params):
                # the engine's rule: finite, an integer of its width for an integer parameter
                try:
                    value = argument_value(inputs.function.params[index], value)
                except LaunchError as exc:
                    self.message.emit(f"argument {index}: {exc}")
                    self.show_state(state)
                    return
            args[index] = value
        self._launch_change({"args": args}, f"Argument {index} = {text or 'unset'}")

    def _param_index(self, name: str) -> int | None:
        inputs = self.session.inputs
        if inputs is None:
            return None
        for i, p in enumerate(inputs.function.params):
            if name in (p.name, _short_param(p.name, inputs.kernel_name)):
                return i
        return None

    def _trip_edited(self, item: QTableWidgetItem) -> None:
        state = self.session.state
        if state is None or self._updating or item.column() != 3:
            return
        loop = self.loops_table.item(item.row(), 0).text()
        text = item.text().strip()
        trips = dict(state.launch.trip_overrides)
        inferred = self.loops_table.item(item.row(), 2).text()
        if text in ("", inferred) and loop not in trips:
            return
        if text == "":
            trips.pop(loop, None)
        else:
            try:
                count = parse_count(text, f"loop {loop}: trip count")
            except WarplineError as exc:
                self.message.emit(str(exc))
                if self.session.result is not None:
                    self.show_result(self.session.result)
                return
            trips[loop] = count
        self._launch_change({"trip_overrides": trips}, f"Trip count {loop} = {text or 'inferred'}")
