"""The shared context toolbar: hardware, GPU count, precision, sparsity, interconnect and the
training run being planned (model size, tokens).

The context is a :class:`workbench.context.RunContext` held by :class:`ContextModel`; every
toolbar edit is one undo command on the window's stack, labelled by
``describe_context_change`` ("Change GPU count to 512"). Consecutive GPU-count edits merge
into one step, like field edits in a panel. The window listens to ``ContextModel.changed``
and hands the new context to every panel.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QSize, Qt, Signal
from PySide6.QtGui import QUndoCommand, QUndoStack
from PySide6.QtWidgets import QCheckBox, QComboBox, QLabel, QSizePolicy, QToolBar, QWidget

import presets
from ui.widgets.quantity_edit import IntField, QuantityField
from workbench._validate import InputError
from workbench.context import RunContext, describe_context_change
from workbench.hardware import PRECISION_LABELS

#: id() of mergeable context edits (distinct from scenario edits).
CONTEXT_EDIT_ID = 0x4358  # "CX"


class ContextModel(QObject):
    """Holds the shared :class:`RunContext`; ``changed`` fires with every new value."""

    changed = Signal(object)

    def __init__(self, context: RunContext | None = None, parent: QObject | None = None):
        super().__init__(parent)
        self._context = context if context is not None else RunContext()
        self._stack: QUndoStack | None = None
        #: names shown in undo labels for preset keys ("h100-sxm" -> "NVIDIA H100 SXM")
        self.hardware_name = lambda key: key
        self.interconnect_name = lambda key: key

    def describe(self, old: RunContext, new: RunContext) -> str:
        """The undo label: describe_context_change, with preset names instead of keys."""
        text = describe_context_change(old, new)
        if old.hardware != new.hardware and text == f"Change hardware to {new.hardware}":
            return f"Change hardware to {self.hardware_name(new.hardware)}"
        if old.interconnect != new.interconnect and text == f"Change interconnect to {new.interconnect}":
            return f"Change interconnect to {self.interconnect_name(new.interconnect) or 'none'}"
        return text

    def context(self) -> RunContext:
        return self._context

    def set_context(self, context: RunContext) -> None:
        """Replace the context without an undo step (undo/redo, opening a project)."""
        if context == self._context:
            return
        self._context = context
        self.changed.emit(context)

    def set_undo_stack(self, stack: QUndoStack | None) -> None:
        self._stack = stack

    def edit(self, **changes) -> bool:
        """Change context fields as one undoable step. Raises ``ValueError`` for bad values
        (nothing is pushed). Returns whether anything changed."""
        new = self._context.with_changes(**changes)
        if new == self._context:
            return False
        command = ContextCommand(self, self._context, new)
        if self._stack is None:
            command.redo()
        else:
            self._stack.push(command)
        return True


class ContextCommand(QUndoCommand):
    """Replace the shared context ``old`` by ``new``; GPU-count edits merge into one step."""

    def __init__(self, model: ContextModel, old: RunContext, new: RunContext):
        super().__init__(model.describe(old, new))
        self.model = model
        self.old = old
        self.new = new
        changed = [k for k, v in old.to_dict().items() if new.to_dict()[k] != v]
        self.field = changed[0] if changed == ["n_gpus"] else None

    def redo(self) -> None:
        self.model.set_context(self.new)

    def undo(self) -> None:
        self.model.set_context(self.old)

    def id(self) -> int:
        return CONTEXT_EDIT_ID if self.field is not None else -1

    def mergeWith(self, other: QUndoCommand) -> bool:  # noqa: N802 - Qt naming
        if not isinstance(other, ContextCommand) or other.model is not self.model:
            return False
        if other.field is None or other.field != self.field:
            return False
        self.new = other.new
        self.setText(self.model.describe(self.old, self.new))
        if self.new == self.old:
            self.setObsolete(True)
        return True


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

        self.interconnect_combo = QComboBox(self)
        self.interconnect_combo.setObjectName("context.interconnect")
        self.interconnect_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.interconnect_combo.setToolTip("GPU-to-GPU link used by the collective and all-reduce panels")
        self.interconnect_combo.addItem("None", "")
        for link in presets.load_interconnects():
            self.interconnect_combo.addItem(link.name, link.key)
            self.interconnect_combo.setItemData(self.interconnect_combo.count() - 1,
                                                f"{link.name}\n{link.source}", Qt.ItemDataRole.ToolTipRole)
        self.interconnect_combo.activated.connect(
            lambda i: self._edit(interconnect=self.interconnect_combo.itemData(i)))

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
        self._add("Interconnect", self.interconnect_combo)
        self.addSeparator()
        self._add("Model", self.model_field)
        self._add("Tokens", self.tokens_field)
        spacer = QWidget(self)
        spacer.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.addWidget(spacer)

        model.hardware_name = catalog.name
        links = {link.key: link.name for link in presets.load_interconnects()}
        model.interconnect_name = lambda key: links.get(key, key)
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
        self._syncing = True
        try:
            self.hardware_combo.clear()
            for hw in self.catalog.items():
                self.hardware_combo.addItem(hw.name, hw.key)
                tip = hw.name + (f"\n{hw.note}" if hw.note else "") + ("" if hw.builtin else "\n(user preset)")
                self.hardware_combo.setItemData(self.hardware_combo.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)
        finally:
            self._syncing = False
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
            precisions = hw.precisions if hw is not None else (ctx.precision,)
            self.precision_combo.clear()
            for p in precisions:
                self.precision_combo.addItem(PRECISION_LABELS.get(p, p), p)
            if self.precision_combo.findData(ctx.precision) < 0:
                self.precision_combo.addItem(f"{PRECISION_LABELS.get(ctx.precision, ctx.precision)} (n/a)",
                                             ctx.precision)
            self.precision_combo.setCurrentIndex(self.precision_combo.findData(ctx.precision))
            can_sparse = hw is not None and ctx.precision in hw.precisions and hw.supports_sparsity(ctx.precision)
            self.sparse_check.setEnabled(can_sparse or ctx.sparse)
            self.sparse_check.setChecked(ctx.sparse)
            self.sparse_check.setToolTip(
                "Use the 2:4 structured-sparsity peak rate" if can_sparse
                else "This preset has no sparse rate at this precision")
            index = self.interconnect_combo.findData(ctx.interconnect)
            if index < 0:
                self.interconnect_combo.addItem(ctx.interconnect, ctx.interconnect)
                index = self.interconnect_combo.count() - 1
            self.interconnect_combo.setCurrentIndex(index)
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
        """Change the shared context (one undo step), as typing in the toolbar does; a panel's
        edit of a context field comes here too. Returns whether the context changed; raises
        ``ValueError`` with what to fix.

        The context stays one the presets can show: a new device keeps the precision when it
        has it, else takes its best default, and drops 2:4 sparsity it has no rate for; a
        precision or sparsity asked for that the device lacks is refused."""
        ctx = self.model.context()
        key = changes.get("hardware", ctx.hardware)
        hw = self.catalog.get(key) if key in self.catalog else None
        if hw is not None:
            precision = changes.get("precision", ctx.precision)
            if precision not in hw.precisions:
                if "precision" in changes:
                    have = ", ".join(PRECISION_LABELS.get(p, p) for p in hw.precisions)
                    raise InputError("precision", f"{hw.name} has no {PRECISION_LABELS.get(precision, precision)} "
                                                  f"rate; it has {have}")
                changes["precision"] = precision = "bf16" if "bf16" in hw.precisions else hw.precisions[-1]
            if changes.get("sparse", ctx.sparse) and not hw.supports_sparsity(precision):
                if changes.get("sparse"):
                    raise InputError("sparse", f"{hw.name} has no 2:4 sparse rate at "
                                               f"{PRECISION_LABELS.get(precision, precision)}")
                changes["sparse"] = False
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
