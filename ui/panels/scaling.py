"""Scaling and MFU panel: how well a training run uses its GPUs, and how it scales with more.

The panel edits a :class:`~workbench.scenarios.ScalingScenario` and draws what
:mod:`workbench.scaling_analysis` computes from it: model FLOPs per token, MFU and HFU, the
predicted step (compute, exposed communication, pipeline bubble, data-loader wait), the
speedup curve (Amdahl for strong scaling, Gustafson for weak), measured points with their
Amdahl fit, storage bandwidths and the training time. No formula lives here.
"""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QComboBox, QLabel, QLineEdit, QVBoxLayout, QWidget

from ui import theme as th
from ui.charts import Chart
from ui.panel import PanelBase, ResultRow
from workbench import scaling as sc
from workbench import scaling_analysis as sa
from workbench.context import RunContext
from workbench.hardware import PRECISION_LABELS
from workbench.scenarios import CHOICES, ScalingScenario

#: Colours of compared scenarios' curves (the law curve is palette blue, measured data green,
#: the operating point vermillion: these stay clear of all three).
_COMPARE_COLORS = (th.ORANGE, th.PURPLE, th.SKY, th.BLACK, th.YELLOW)
_X_MIN_TOP = 1024  # the GPU axis always reaches at least this far


def _count_label(n: int) -> str:
    """Tick text for a power of two: 1 ... 65536, then 128k, 256k ..."""
    return f"{n}" if n <= 65536 else f"{n // 1024}k"


def _power_of_two_ticks(top: float, max_labels: int = 12) -> list[list[tuple[float, str]]]:
    """Major (labelled) and minor ticks at powers of two from 1 to ``top``, in log10 view units."""
    exponents = list(range(0, int(math.floor(math.log2(top))) + 1))
    step = max(1, math.ceil(len(exponents) / max_labels))
    major = [(k * math.log10(2), _count_label(2**k)) for k in exponents if k % step == 0]
    minor = [(k * math.log10(2), "") for k in exponents if k % step]
    return [major, minor]


class MeasuredField(QWidget):
    """A line of measured (GPUs: tokens/s) pairs, "8: 85.1k; 64: 610k", with a message line.

    Parsing is :func:`workbench.scaling_analysis.parse_measured`; a bad entry keeps the last
    good points, gets a red border and says what to fix.
    """

    def __init__(self, parent: QWidget | None = None, on_commit=None):
        super().__init__(parent)
        self._on_commit = on_commit
        self._shown = ""
        self.edit = QLineEdit(self)
        self.edit.setPlaceholderText("e.g. 8: 85k; 64: 610k")
        self.edit.setToolTip(
            "<b>Measured throughput</b><br>Global tokens/s measured at several GPU counts, as "
            "'GPUs: tokens/s' pairs separated by ';'. With two or more GPU counts the chart shows "
            "them as speedups with an Amdahl fit, and the results give the Karp-Flatt serial fraction."
        )
        self.edit.setAccessibleName("Measured throughput")
        self.message = QLabel(self)
        self.message.setObjectName("fieldMessage")
        self.message.setWordWrap(True)
        self.message.setVisible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.edit)
        layout.addWidget(self.message)
        self.setFocusProxy(self.edit)
        self.edit.returnPressed.connect(self.commit)
        self.edit.editingFinished.connect(self.commit)

    def set_pairs(self, pairs) -> None:
        self._shown = sa.format_measured(pairs)
        self.edit.setText(self._shown)
        self.show_error("")

    def commit(self) -> None:
        text = self.edit.text()
        if text == self._shown:
            self.show_error("")
            return
        try:
            pairs = sa.parse_measured(text)
        except ValueError as exc:
            message = str(exc)
            self.show_error(message.split(": ", 1)[1] if message.startswith("measured: ") else message)
            return
        if self._on_commit is not None:
            self._on_commit(pairs)

    def show_error(self, message: str) -> None:
        self.message.setText(message[:1].upper() + message[1:])
        self.message.setStyleSheet(f"color: {th.current_theme().error};")
        self.message.setVisible(bool(message))
        self.edit.setStyleSheet(th.error_style_sheet() if message else "")

    def message_text(self) -> str:
        return self.message.text() if not self.message.isHidden() else ""


class ScalingPanel(PanelBase):
    """Scaling and MFU: utilisation of the GPUs and speedup with more of them."""

    kind = "scaling"
    title = "Scaling and MFU"

    def __init__(self, catalog, scenario=None, parent=None, *, undo_stack=None):
        self.catalog = catalog
        self._comparison: list[tuple[str, ScalingScenario]] = []
        self._analysis: sa.ScalingAnalysis | None = None
        self._problem = ""
        self._user_sized = False  # the user dragged the chart/results splitter: keep their sizes
        super().__init__(scenario if scenario is not None else ScalingScenario(), parent, undo_stack=undo_stack)
        self._build_form()
        self.chart = Chart(
            title="Speedup vs GPU count",
            x_label="GPUs",
            x_unit="count",
            y_label="Speedup",
            y_unit="×",
            log_x=True,
            log_y=True,
        )
        self.add_chart(self.chart)
        self.chart.enable_hover(formatter=lambda x, y: f"GPUs: {x:,.0f}\nSpeedup: {y:.3g}×")
        self.center.installEventFilter(self)
        self.center.splitterMoved.connect(self._on_user_sized)
        catalog.changed.connect(self._reload_hardware)
        self.refresh()

    # -- form ----------------------------------------------------------------------------------
    def _build_form(self) -> None:
        self.add_section("Hardware")
        self.hardware_combo = self.add_choice("hardware", self._hardware_choices())
        self.hardware_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.hardware_combo.setMinimumContentsLength(12)
        self._ensure_hardware_item()
        self._sync_field("hardware")
        self.add_choice("precision", [(PRECISION_LABELS[p], p) for p in CHOICES["precision"]])
        sparse = self.add_check("sparse", "2:4 sparsity (not in MFU)")
        sparse.setToolTip("Structured 2:4 sparsity. MFU and HFU always use the dense peak.")
        self.add_int_field("n_gpus", minimum=1, maximum=ScalingScenario.MAX_GPUS,
                           description="GPUs in the whole job (all data, tensor and pipeline ranks).")

        self.add_section("Model")
        self.add_quantity_field("n_params", unit="", minimum=0, min_inclusive=False,
                                description="Parameter count N, e.g. 6.66B.")
        self.add_int_field("n_layers", minimum=0, description="Transformer layers L (0 with d and T 0: 6N only).")
        self.add_int_field("d_model", minimum=0, description="Heads x head size d (the model width for MHA).")
        self.add_int_field("seq_len", minimum=0, description="Sequence length T in tokens.")

        self.add_section("Throughput")
        self.add_quantity_field("tokens_per_s", "Tokens/s (global)", unit="", minimum=0, min_inclusive=False,
                                description="Measured global throughput of the whole job, tokens/s.")
        self.measured_field = MeasuredField(self.form_widget, on_commit=lambda pairs: self.edit(measured=pairs))
        self.measured_field.setObjectName("field.measured")
        self.measured_field.set_pairs(self.scenario().measured)
        self.form.addRow("Measured", self.measured_field)
        self.add_choice("recompute", [("none", "none"), ("full (HFU = MFU x 4/3)", "full")], "Recompute")

        self.add_section("Scaling")
        self.add_choice("mode", [("strong (Amdahl)", "strong"), ("weak (Gustafson)", "weak")], "Mode")
        self.add_quantity_field("serial_fraction", unit="%", minimum=0, maximum=1,
                                description="Share of the work that does not parallelise (Amdahl's s).")

        self.add_section("Step overheads")
        self.add_int_field("pipeline_stages", minimum=1, description="Pipeline-parallel stages p.")
        self.add_int_field("microbatches", minimum=1, description="Microbatches per step m.")
        self.add_quantity_field("comm_time_s", "Comm time / step", unit="s", minimum=0,
                                description="Communication time per step, before overlap.")
        self.add_quantity_field("overlap", "Comm overlap", unit="%", minimum=0, maximum=1,
                                description="Share of communication hidden behind compute.")
        self.add_quantity_field("dataloader_wait_s", "Loader wait / step", unit="s", minimum=0,
                                description="Time per step the GPUs wait for input data.")

        self.add_section("Storage")
        self.add_quantity_field("bytes_per_token", unit="B", minimum=0,
                                description="Bytes read per trained token (2 for uint16 token ids).")
        self.add_quantity_field("checkpoint_bytes", unit="B", minimum=0, binary=True,
                                description="One checkpoint; 0 estimates 14 B per parameter (mixed-precision Adam).")
        self.add_quantity_field("checkpoint_interval_s", unit="s", minimum=0, min_inclusive=False,
                                description="Time between checkpoints, e.g. 1 h.")

    def field(self, name: str) -> QWidget | None:
        if name == "measured":
            return self.measured_field
        return super().field(name)

    def _hardware_choices(self) -> list[tuple[str, str]]:
        return [(self.catalog.name(key), key) for key in self.catalog.keys()]

    def _reload_hardware(self) -> None:
        combo = self.hardware_combo
        combo.blockSignals(True)
        combo.clear()
        for text, key in self._hardware_choices():
            combo.addItem(text, key)
        self._ensure_hardware_item()
        combo.setCurrentIndex(combo.findData(self.scenario().hardware))
        combo.blockSignals(False)
        self.refresh()

    def _ensure_hardware_item(self) -> None:
        """A hardware key the catalog lacks stays visible ("(not in catalog)"), never silently
        shown as another preset."""
        combo = getattr(self, "hardware_combo", None)
        key = self.scenario().hardware
        if combo is not None and combo.findData(key) < 0:
            combo.addItem(f"{key} (not in catalog)", key)

    def _sync_fields(self) -> None:
        self._ensure_hardware_item()
        super()._sync_fields()
        if hasattr(self, "measured_field"):
            self.measured_field.set_pairs(self.scenario().measured)

    # -- context and comparison -------------------------------------------------------------------
    CONTEXT_FIELDS = {"hardware": "hardware", "precision": "precision", "sparse": "sparse",
                      "n_gpus": "n_gpus", "n_params": "n_params", "n_layers": "n_layers",
                      "d_model": "d_model", "seq_len": "seq_len"}
    #: the plan predicts the throughput and its overheads; typing them explores locally
    PLAN_DERIVED_FIELDS = frozenset({"tokens_per_s", "pipeline_stages", "microbatches", "comm_time_s",
                                     "overlap", "dataloader_wait_s"})

    def plan_followed(self) -> None:
        self.refresh()  # the training tokens may have changed

    def _train_tokens(self) -> float:
        ctx = self.context()
        return ctx.train_tokens if isinstance(ctx, RunContext) else RunContext().train_tokens

    def set_comparison(self, items: list[tuple[str, ScalingScenario]]) -> None:
        """Overlay other saved scenarios' speedup curves (dashed, named)."""
        self._comparison = [(str(name), scenario) for name, scenario in items]
        self.refresh()

    def clear_comparison(self) -> None:
        self._comparison = []
        self.refresh()

    def comparison(self) -> list[tuple[str, ScalingScenario]]:
        return list(self._comparison)

    # -- drawing --------------------------------------------------------------------------------
    def _x_top(self) -> int:
        return max(_X_MIN_TOP, 4 * self.scenario().n_gpus)

    def refresh(self) -> None:
        if not hasattr(self, "chart"):
            return  # still being built
        s = self.scenario()
        self._analysis = None
        problem = ""
        try:
            peak = self.catalog.get(s.hardware).peak_flops(s.precision, sparse=False)
        except (KeyError, ValueError) as exc:
            peak = None
            problem = str(exc).strip("'\"")
        if peak is not None:
            try:
                self._analysis = sa.analyse_scaling(s, peak, self._train_tokens())
            except ValueError as exc:
                problem = str(exc)
        if problem:
            self.show_status(problem)
        elif self._problem:
            self.clear_error()
        self._problem = problem
        self._draw_chart()
        self.results.set_rows(self._rows())
        if not self._user_sized:
            self._fit_results()

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt naming
        if obj is self.center and event.type() == QEvent.Type.Resize and not self._user_sized:
            self._fit_results(event.size().height() - self.center.handleWidth())
        return super().eventFilter(obj, event)

    def _on_user_sized(self, *_args) -> None:
        self._user_sized = True

    def _fit_results(self, total: int | None = None) -> None:
        """Give the results table the height of all its rows, once the panel has a size (the
        chart keeps the rest; a user's later drag of the splitter is left alone)."""
        table = self.results
        needed = (table.horizontalHeader().sizeHint().height() + 2 * table.frameWidth() + 4
                  + table.rowCount() * table.verticalHeader().defaultSectionSize())
        total = sum(self.center.sizes()) if total is None else total
        if total > 0:
            rows = min(needed, total // 2)
            self.center.setSizes([total - rows, rows])

    def _law_name(self, scenario: ScalingScenario) -> str:
        return f"{sa.LAW_NAMES[scenario.mode]}, s = {scenario.serial_fraction * 100:.3g}%"

    def _draw_chart(self) -> None:
        s = self.scenario()
        chart = self.chart
        top = self._x_top()
        chart.clear_series()
        theme = chart.theme()
        n, speedup, _eff = sa.speedup_sweep(s.serial_fraction, top, s.mode)
        chart.add_series(self._law_name(s), n, speedup, width=th.BASE_LINE_WIDTH * 1.5)
        chart.add_series("Ideal (linear)", n, n, color=theme.muted, style="dash", width=th.BASE_LINE_WIDTH * 0.75)
        y_top = float(top)
        measured = self._analysis.measured if self._analysis is not None else None
        if measured is None and len(s.measured) >= 2:
            try:
                measured = sa.measured_speedups(s.measured)
            except ValueError:
                measured = None
        if measured is not None:
            fit = measured.fit
            _, fitted, _ = sa.speedup_sweep(fit.serial_fraction, top, "strong")
            chart.add_series(f"Amdahl fit to measured, s = {fit.serial_fraction * 100:.3g}%", n, fitted,
                             color=th.MEASURED, style="dot")
            chart.add_series("Measured", measured.gpus, measured.speedup, color=th.MEASURED, symbol="o")
            self._points_only("Measured")
            y_top = max(y_top, float(np.max(measured.speedup)))
        for i, (name, other) in enumerate(self._comparison):
            _, curve, _ = sa.speedup_sweep(other.serial_fraction, top, other.mode)
            chart.add_series(f"{name} ({self._law_name(other)})", n, curve,
                             color=_COMPARE_COLORS[i % len(_COMPARE_COLORS)], style="dash")
        op = float(sa.speedup_at(s.serial_fraction, s.n_gpus, s.mode))
        chart.set_operating_point(s.n_gpus, op, f"{s.n_gpus:,} GPUs: {op:.3g}×")
        ticks = _power_of_two_ticks(top)
        chart.axis("x").setTicks(ticks)
        chart.axis("y").setTicks(_power_of_two_ticks(y_top * 1.2, max_labels=9))
        chart.set_log_range(1, top, 1, y_top * 1.2, padding=0.02)

    def _points_only(self, name: str) -> None:
        """Measured points are markers, not a line (kept through restyles)."""
        for series in self.chart.series():
            if series.name == name:
                series.style = Qt.PenStyle.NoPen
                series.item.setPen(None)

    # -- results --------------------------------------------------------------------------------
    def _plan_step_rows(self) -> list[ResultRow]:
        """While the panel follows the run plan, its step is the plan's (the overheads are in the
        predicted throughput, so this panel's own step model would count them twice)."""
        view = self.plan_view()
        p = getattr(view, "prediction", None)
        if not self.follows_plan() or p is None:
            return []
        from workbench.plan import TERM_LABELS

        rows = [ResultRow(f"Step: {TERM_LABELS[term].lower()}", seconds, "s",
                          "From the run plan's prediction (Run plan panel; workbench.plan).")
                for term, seconds in p.breakdown.items() if seconds > 0]
        rows.append(ResultRow("Step time (run plan)", p.step_time_s, "s",
                              f"The run plan's step: {p.plan.global_batch:,} sequences of {p.plan.seq_len:,} tokens."))
        rows.append(ResultRow("MFU (run plan)", p.mfu, "%", "The run plan's MFU, 6N + 12·L·d·T per token."))
        return rows

    def _rows(self) -> list[ResultRow]:
        s = self.scenario()
        a = self._analysis
        law = sa.LAW_NAMES[s.mode]
        n = f"{s.n_gpus:,}"
        precision = PRECISION_LABELS[s.precision]

        def val(get):
            if a is None:
                return None
            return get(a)

        b = a.breakdown if a is not None else None
        no_step = "Needs the sequence length (the step is one sequence per replica per microbatch)."
        step_note = (
            "ScalingScenario has no batch size: one step is one sequence per data-parallel replica "
            "per microbatch, T x m x max(1, GPUs / p) tokens, and the measured throughput is taken "
            "as the rate of the compute alone."
        )
        shape = "6N" if s.six_n_only else "6N + 12·L·d·T"
        rows = [
            ResultRow("Model FLOPs per token", val(lambda a: a.flops_per_token), "FLOP",
                      f"Training FLOPs per token (forward + backward): {shape}, N parameters, L layers, "
                      "d = heads x head size, T sequence length (attention not halved for causal masking)."),
            ResultRow(f"Peak per GPU (dense {precision})", val(lambda a: a.peak_flops), "FLOP/s",
                      "The dense peak of one GPU at the precision, from the hardware preset. Structured "
                      "sparsity is never counted in MFU peaks" + (" (sparsity is on, and ignored here)." if s.sparse
                                                                  else ".")),
            ResultRow("MFU", val(lambda a: a.mfu), "%",
                      "Model FLOPs utilisation = FLOPs per token x tokens/s / (GPUs x dense peak per GPU)."),
            ResultRow("HFU", val(lambda a: a.hfu), "%",
                      "Hardware FLOPs utilisation: MFU counting recomputed work too; full activation "
                      "recomputation re-runs the forward pass, HFU = MFU x 4/3."),
        ]
        rows += self._plan_step_rows() or [
            ResultRow("Step: compute", b.compute_s if b else None, "s",
                      f"Compute time of one step = tokens per step / measured tokens/s. {step_note}"
                      if b else no_step),
            ResultRow("Step: exposed communication", b.exposed_comm_s if b else None, "s",
                      "Communication not hidden behind compute = comm time x (1 - overlap)." if b else no_step),
            ResultRow("Step: pipeline bubble", b.bubble_s if b else None, "s",
                      "Pipeline fill and drain = compute x (p - 1) / m, p stages, m microbatches "
                      f"(bubble fraction (p - 1) / (m + p - 1) = {b.bubble_fraction:.1%})." if b else no_step),
            ResultRow("Step: data-loader wait", b.dataloader_wait_s if b else None, "s",
                      "Time per step the GPUs wait for input (an input value)." if b else no_step),
            ResultRow("Predicted step time", b.total_s if b else None, "s",
                      "compute + exposed communication + pipeline bubble + data-loader wait." if b else no_step),
            ResultRow("Predicted MFU", val(lambda a: a.predicted_mfu), "%",
                      "MFU once the step's overheads are counted = MFU x compute / step time."
                      if b else no_step),
        ]
        rows += [
            ResultRow(f"{law} speedup at {n} GPUs", None if a is None else f"{a.speedup:.3g}", "×",
                      "Strong scaling (Amdahl): S(n) = 1 / (s + (1 - s) / n), at most min(n, 1/s)."
                      if s.mode == "strong" else
                      "Weak scaling (Gustafson): scaled speedup S(n) = s + (1 - s) n."),
            ResultRow(f"{law} efficiency at {n} GPUs", val(lambda a: a.efficiency), "%",
                      "Parallel efficiency = speedup / n (1 = perfect linear scaling)."),
            ResultRow("Fitted serial fraction", val(lambda a: a.measured.fit.serial_fraction if a.measured else None),
                      "%", "Amdahl fit of the measured (GPUs, tokens/s) points: least squares in throughput "
                      "of X(n) = X1 / (s + (1 - s) / n). Needs two or more GPU counts."),
            ResultRow(
                f"Karp-Flatt at {a.karp_flatt_gpus:,} GPUs" if a is not None and a.karp_flatt_gpus else "Karp-Flatt",
                val(lambda a: a.karp_flatt), "%",
                "Experimentally determined serial fraction of the measured point with the most GPUs: "
                "e = (1/S - 1/n) / (1 - 1/n), S = measured throughput / the fit's single-GPU throughput. "
                "Growing with n means overhead, not a fixed serial part. Needs two or more GPU counts."),
            ResultRow("Input read bandwidth", val(lambda a: a.read_bytes_per_s), "B/s",
                      "Sustained read rate that keeps the job fed = tokens/s x bytes per token."),
            ResultRow("Checkpoint write bandwidth" + (" (size est.)" if s.checkpoint_bytes <= 0 else ""),
                      val(lambda a: a.checkpoint_write_bytes_per_s), "B/s",
                      "Average write rate = checkpoint size / checkpoint interval"
                      + (" (size estimated at 14 B per parameter: BF16 weights, FP32 master weights, "
                         "Adam moments)." if s.checkpoint_bytes <= 0 else ".")),
            ResultRow("Training time", val(lambda a: a.training_time_s), "s",
                      f"Training tokens of the run ({self._train_tokens():.3g}, from the shared context) / "
                      "measured tokens/s."),
        ]
        return rows

    def analysis(self) -> sa.ScalingAnalysis | None:
        """The numbers on show (``None`` when the hardware or inputs do not allow them)."""
        self.ensure_drawn()  # a hidden panel draws what it put off before it is read
        return self._analysis

    # -- explain, export ------------------------------------------------------------------------------
    def explanation(self) -> str:
        return (
            "<h3>Scaling and MFU</h3>"
            "<p><b>Model FLOPs per token</b> = 6N + 12·L·d·T (forward 2N + backward 4N, plus "
            "attention scores and values; d = heads × head size; 6N alone when the shape is not given).</p>"
            "<p><b>MFU</b> = FLOPs per token × tokens/s ÷ (GPUs × <i>dense</i> peak per GPU). "
            "Sparsity is never counted in MFU peaks: the dense peak is used even with 2:4 sparsity on. "
            "<b>HFU</b> adds recomputed work: full activation recomputation gives HFU = MFU × 4/3.</p>"
            "<p><b>Predicted step</b>: compute + communication × (1 − overlap) + pipeline bubble "
            "compute × (p − 1)/m + data-loader wait; predicted MFU = MFU × compute ÷ step. "
            "Without a batch size, a step is one sequence per data-parallel replica per microbatch, "
            "and the measured throughput is taken as the rate of the compute alone.</p>"
            "<p><b>Speedup</b>: Amdahl (strong scaling) S = 1 / (s + (1 − s)/n); Gustafson (weak "
            "scaling) S = s + (1 − s)·n; efficiency = S / n. Measured points are shown as speedups "
            "relative to the single-GPU throughput of their Amdahl fit; Karp-Flatt "
            "e = (1/S − 1/n) / (1 − 1/n).</p>"
            "<p><b>Storage</b>: read = tokens/s × bytes per token; checkpoint write = size ÷ interval "
            "(size 0: 14 B per parameter). <b>Training time</b> = training tokens ÷ tokens/s.</p>"
        )

    def csv_columns(self):
        """The speedup curve at every power of two (and the current GPU count), with units;
        compared scenarios' speedups as extra columns."""
        s = self.scenario()
        top = self._x_top()
        n = np.unique(np.concatenate([2.0 ** np.arange(0, int(math.log2(top)) + 1), [float(s.n_gpus)]]))
        speedup = np.asarray(sa.speedup_at(s.serial_fraction, n, s.mode), dtype=float)
        efficiency = np.asarray(sc.scaling_efficiency(speedup, n, 1.0), dtype=float)
        columns = [("GPUs (count)", n.astype(int).tolist()), ("speedup (x)", speedup.tolist()),
                   ("efficiency (fraction)", efficiency.tolist())]
        for name, other in self._comparison:
            curve = np.asarray(sa.speedup_at(other.serial_fraction, n, other.mode), dtype=float)
            columns.append((f"{name} speedup (x)", curve.tolist()))
        return columns
