"""The context toolbar: the run plan's hardware, GPU count, precision (and the roofline's 2:4
sparsity), its links inside and between nodes, model size and training tokens.

Every toolbar edit is one plan edit on the window's undo stack (``ui.document.Document``),
labelled "Change GPU count to 512"; consecutive edits of one field merge into one step, like
field edits in a panel. The rules (a device keeps its precision or falls back, a GPU count
keeps each replica's batch) are ``workbench.workspace.edit_plan``'s.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QSize, Qt, Signal
from PySide6.QtWidgets import QCheckBox, QComboBox, QLabel, QSizePolicy, QToolBar, QWidget

import presets
from ui import plain
from ui.widgets.combo_items import set_choices
from ui.widgets.quantity_edit import IntField, QuantityField
from workbench.context import RunContext
from workbench.hardware import PRECISION_LABELS


class ContextModel(QObject):
    """The shared context as earlier releases saw it (hardware, GPUs, precision, sparsity,
    link, model size, tokens), now a view of the document's run plan: reading it reads the
    plan, editing it edits the plan (one undo step, by :meth:`ui.document.Document.edit_plan`).
    ``changed`` fires with the new context after every plan change."""

    changed = Signal(object)

    def __init__(self, document, parent: QObject | None = None):
        super().__init__(parent)
        self.document = document
        document.planChanged.connect(lambda _plan: self.changed.emit(self.context()))

    def context(self) -> RunContext:
        return self.document.context()

    def set_context(self, context: RunContext) -> None:
        """Take ``context`` into the plan without an undo step."""
        self.document.set_context(context)

    def edit(self, **changes) -> bool:
        """Change context fields (plan fields too) as one undoable step. Raises ``ValueError``
        for bad values (nothing is pushed). Returns whether anything changed."""
        return self.document.edit_plan(**changes)


class _ToolbarField(QuantityField):
    """A quantity field for a toolbar: its validation message goes to ``messageChanged``
    (the window shows it in the status bar and as a tooltip) instead of growing the toolbar."""

    messageChanged = Signal(str)

    def _on_validity(self, valid: bool, message: str) -> None:
        self.message.setVisible(False)
        self.edit.setToolTip(message if message else getattr(self, "_hint", ""))
        self.messageChanged.emit(message)

    def set_hint(self, hint: str) -> None:
        self._hint = hint
        self.edit.setToolTip(hint)


class _ToolbarIntField(IntField):
    """The same toolbar behaviour for whole numbers (each Qt class declares its own signal)."""

    messageChanged = Signal(str)
    _on_validity = _ToolbarField._on_validity
    set_hint = _ToolbarField.set_hint


class ContextToolbar(QToolBar):
    """The widgets that edit a :class:`ContextModel`."""

    #: a validation message to show (empty when the fields are fine again)
    messageChanged = Signal(str)

    def __init__(self, model: ContextModel, catalog, parent: QWidget | None = None):
        super().__init__("Run context", parent)
        self.setObjectName("toolbar.context")
        self.setMovable(False)
        self.setFloatable(False)
        self.setIconSize(QSize(16, 16))
        self.model = model
        self.catalog = catalog
        self._syncing = False

        self.hardware_combo = QComboBox(self)
        self.hardware_combo.setObjectName("context.hardware")
        self.hardware_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.hardware_combo.setMinimumContentsLength(16)
        self.hardware_combo.setToolTip("Hardware preset shared by every panel")
        self.hardware_combo.activated.connect(self._hardware_chosen)

        self.gpu_field = _ToolbarIntField(self, label="GPU count", minimum=1, maximum=10_000_000)
        self.gpu_field.setObjectName("context.n_gpus")
        self.gpu_field.set_hint("Number of GPUs in the run, e.g. 512 or 16k")
        self.gpu_field.setFixedWidth(90)
        self.gpu_field.valueEdited.connect(lambda v: self._edit(n_gpus=int(v)))

        self.precision_combo = QComboBox(self)
        self.precision_combo.setObjectName("context.precision")
        self.precision_combo.setToolTip("Numeric precision of the matrix maths (only those the preset supports)")
        self.precision_combo.activated.connect(
            lambda i: self._edit(precision=self.precision_combo.itemData(i)))

        self.sparse_check = QCheckBox("2:4 sparse", self)
        self.sparse_check.setObjectName("context.sparse")
        self.sparse_check.toggled.connect(lambda on: None if self._syncing else self._edit(sparse=bool(on)))

        links = presets.load_interconnects()
        self.interconnect_combo = QComboBox(self)
        self.interconnect_combo.setObjectName("context.interconnect")
        self.interconnect_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.interconnect_combo.setToolTip("Link between the GPUs of one node (tensor parallelism, and data "
                                           "parallelism inside a node)")
        self.interconnect_combo.addItem("GPU's own link", None)
        self.network_combo = QComboBox(self)
        self.network_combo.setObjectName("context.network")
        self.network_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.network_combo.setToolTip("Each GPU's network card between nodes (data and pipeline parallelism "
                                      "across nodes)")
        for link in links:
            combo = self.network_combo if link.key.startswith("nic") else self.interconnect_combo
            combo.addItem(link.name, link.key)
            combo.setItemData(combo.count() - 1, plain.tooltip(f"{link.name}\n{link.source}"),
                              Qt.ItemDataRole.ToolTipRole)
        self.interconnect_combo.activated.connect(
            lambda i: self._edit(intra_node=self.interconnect_combo.itemData(i)))
        self.network_combo.activated.connect(
            lambda i: self._edit(inter_node=self.network_combo.itemData(i)))

        self.model_field = _ToolbarField("", self, label="Model size", minimum=1, min_inclusive=True)
        self.model_field.setObjectName("context.model_params")
        self.model_field.set_hint("Parameters of the model being trained, e.g. 70B or 405B")
        self.model_field.setFixedWidth(90)
        self.model_field.valueEdited.connect(lambda v: self._edit(model_params=float(v)))

        self.tokens_field = _ToolbarField("", self, label="Training tokens", minimum=1)
        self.tokens_field.setObjectName("context.train_tokens")
        self.tokens_field.set_hint("Tokens processed by the whole run, e.g. 15T")
        self.tokens_field.setFixedWidth(90)
        self.tokens_field.valueEdited.connect(lambda v: self._edit(train_tokens=float(v)))

        for field in (self.gpu_field, self.model_field, self.tokens_field):
            field.messageChanged.connect(self.messageChanged)

        self._add("Hardware", self.hardware_combo)
        self._add("GPUs", self.gpu_field)
        self._add("Precision", self.precision_combo)
        self.addWidget(self.sparse_check)
        self._add("Node link", self.interconnect_combo)
        self._add("Network", self.network_combo)
        self.addSeparator()
        self._add("Model", self.model_field)
        self._add("Tokens", self.tokens_field)
        spacer = QWidget(self)
        spacer.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.addWidget(spacer)

        names = {link.key: link.name for link in links}
        model.document.interconnect_name = lambda key: names.get(key, key)
        catalog.changed.connect(self._fill_hardware)
        model.changed.connect(self.sync)
        self._fill_hardware()

    def _add(self, label: str, widget: QWidget) -> None:
        widget.setAccessibleName(label)
        text = QLabel(f" {label} ", self)
        text.setBuddy(widget)
        text.setContentsMargins(6, 0, 2, 0)
        self.addWidget(text)
        self.addWidget(widget)

    # -- model -> widgets ----------------------------------------------------------------------
    def _fill_hardware(self) -> None:
        set_choices(self.hardware_combo, [
            (hw.name, hw.key,
             plain.tooltip(hw.name + (f"\n{hw.note}" if hw.note else "") + ("" if hw.builtin else "\n(user preset)")))
            for hw in self.catalog.items()])
        self.sync(self.model.context())

    def sync(self, ctx: RunContext | None = None) -> None:
        """Show ``ctx`` (default: the model's) in the widgets, without emitting edits."""
        ctx = ctx or self.model.context()
        self._syncing = True
        try:
            index = self.hardware_combo.findData(ctx.hardware)
            if index < 0:  # a preset this catalog lacks (deleted, or from another project)
                self.hardware_combo.addItem(f"{ctx.hardware} (missing)", ctx.hardware)
                index = self.hardware_combo.count() - 1
            self.hardware_combo.setCurrentIndex(index)
            hw = self.catalog.get(ctx.hardware) if ctx.hardware in self.catalog else None
            precisions = list(hw.precisions) if hw is not None else [ctx.precision]
            wanted = [(PRECISION_LABELS.get(p, p), p) for p in precisions]
            if ctx.precision not in precisions:
                wanted.append((f"{PRECISION_LABELS.get(ctx.precision, ctx.precision)} (n/a)", ctx.precision))
            combo = self.precision_combo
            set_choices(combo, wanted)  # refilled for another device only: most plan edits keep its precisions
            combo.setCurrentIndex(combo.findData(ctx.precision))
            can_sparse = hw is not None and ctx.precision in hw.precisions and hw.supports_sparsity(ctx.precision)
            self.sparse_check.setEnabled(can_sparse or ctx.sparse)
            self.sparse_check.setChecked(ctx.sparse)
            tip = ("Use the 2:4 structured-sparsity peak rate" if can_sparse
                   else "This preset has no sparse rate at this precision")
            if self.sparse_check.toolTip() != tip:
                self.sparse_check.setToolTip(tip)
            plan = self.model.document.plan()
            for combo, key in ((self.interconnect_combo, plan.intra_node), (self.network_combo, plan.inter_node)):
                index = combo.findData(key)
                if index < 0:
                    combo.addItem(str(key), key)
                    index = combo.count() - 1
                combo.setCurrentIndex(index)
            # a field already showing its value is not set again (QuantityEdit.setValue)
            self.gpu_field.setValue(ctx.n_gpus)
            self.model_field.setValue(ctx.model_params)
            self.tokens_field.setValue(ctx.train_tokens)
        finally:
            self._syncing = False

    # -- widgets -> model ----------------------------------------------------------------------
    def _hardware_chosen(self, index: int) -> None:
        key = self.hardware_combo.itemData(index)
        if not key:
            return
        self._edit(hardware=key)

    def apply(self, **changes) -> bool:
        """Change the run plan (one undo step), as typing in the toolbar does; a panel's edit of
        a plan field comes here too. Returns whether the plan changed; raises ``ValueError``
        with what to fix (``ui.document.Document.planned`` and ``workbench.workspace.edit_plan``
        hold the rules)."""
        return self.model.edit(**changes)

    def _edit(self, **changes) -> None:
        if self._syncing:
            return
        try:
            self.apply(**changes)
        except ValueError as exc:
            self.messageChanged.emit(str(exc))
            self.sync()
            return
        self.messageChanged.emit("")
