"""Collectives panel: watch all-reduce, reduce, reduce-scatter, all-gather, broadcast,
scatter and all-to-all move data between ranks, one step at a time.

The panel's analysis (:mod:`workbench.analyses.collective`, kept by the document once per
change) holds the snapshots of the chosen collective and schedule, what they move and what
each step costs; the panel shows one snapshot in a :class:`CollectiveView`, and the results
table the step count, bytes per link, bytes each rank sends, the nccl-tests bus factor and
what every rank holds at the end.

Every step is costed with the alpha-beta model: the view shows the step's time and the time
so far, and the steps add up to the All-reduce calculator's time for the same collective,
size, ranks, link bandwidth and latency. Stepping only picks another snapshot of the same
analysis: it computes nothing. The
link is the scenario's (``link_bw``, ``alpha``, ``interconnect``), so it is saved with it.
In the window it follows the run plan (the ring its data-parallel collectives run on, as the
calculator's does, see ``workbench.workspace``); typing a link or a rank count makes the
panel keep its own inputs (Local override) until the banner's "Follow the plan". The
calculator's defaults stand in without a plan.

Editing the collective, rank count, schedule, message size, root or link is an undoable edit.
Stepping is navigation, not an edit: the step lives in the scenario (so a saved scenario
reopens on the same step) but changing it never pushes an undo command (see ``_set_step``).

The animation exports as an animated GIF or APNG or as numbered PNGs (Export menu, or
:meth:`CollectivePanel.export_animation` without a dialog; see :mod:`ui.animation_export`).
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QSlider,
    QSpinBox,
    QToolButton,
    QWidget,
)

import presets
from ui import animation_export
from ui import theme as th
from ui.animation_export import AnimationOptions
from ui.export import Caption, default_assumptions, quantity_header
from ui.panel import PanelBase, ResultRow
from ui.panels.collective_view import CollectiveView
from workbench import units
from workbench.collectives import MAX_RANKS, MIN_RANKS, Collective, Frame, StepTime
from workbench.scenarios import CollectiveScenario, describe_change

if TYPE_CHECKING:
    from workbench.analyses.collective import CollectiveAnalysis

#: Playback speeds: (label, milliseconds per step).
SPEEDS: tuple[tuple[str, int], ...] = (
    ("0.5 steps/s", 2000),
    ("1 step/s", 1000),
    ("2 steps/s", 500),
    ("4 steps/s", 250),
)
DEFAULT_SPEED = 1

SCHEDULE_CHOICES = (("Conceptual (one step)", "conceptual"), ("Ring", "ring"))

#: The scenario's fields the analysis reads: every one but the step on screen.
_ANALYSED_FIELDS = tuple(f.name for f in dataclasses.fields(CollectiveScenario) if f.name != "step")


def _same_but_the_step(a: CollectiveScenario | None, b: CollectiveScenario | None) -> bool:
    return a is b or (a is not None and b is not None
                      and all(getattr(a, name) == getattr(b, name) for name in _ANALYSED_FIELDS))


_DEFINITIONS: dict[Collective, str] = {
    Collective.ALL_REDUCE: "Every rank ends with the element-wise <b>sum over all ranks</b> of the whole "
    "buffer. Data-parallel training runs one per step to add up the gradients.",
    Collective.REDUCE: "The <b>root</b> ends with the sum over all ranks; the other ranks only send.",
    Collective.REDUCE_SCATTER: "The buffer is cut into n chunks; rank r ends with <b>chunk r summed over "
    "all ranks</b> (and nothing else). ZeRO / FSDP use it for gradients.",
    Collective.ALL_GATHER: "Rank r starts with chunk r; every rank ends with <b>all n chunks</b>. "
    "ZeRO / FSDP use it to rebuild sharded parameters.",
    Collective.BROADCAST: "Every rank ends with a <b>copy of the root's buffer</b>.",
    Collective.SCATTER: "The root's buffer is cut into n chunks; rank r receives <b>chunk r</b>.",
    Collective.ALL_TO_ALL: "Chunk j of rank r goes to rank j (into slot r): a <b>transpose</b> of the data "
    "across ranks. Mixture-of-experts layers use it to route tokens to experts.",
}

_RING: dict[Collective, str] = {
    Collective.ALL_REDUCE: "<b>Ring schedule</b>: a <i>reduce-scatter</i> then an <i>all-gather</i>, "
    "<b>n&minus;1 steps each</b>. In every step each rank sends one chunk of "
    "<b>S/n bytes</b> to the next rank on the ring, so every link carries S/n per "
    "step and 2(n&minus;1)/n&middot;S in all, however many ranks there are.",
    Collective.REDUCE_SCATTER: "<b>Ring schedule</b>: n&minus;1 steps; in each, every rank adds the chunk "
    "it receives (S/n bytes per link) into its own and passes the partial sum on.",
    Collective.ALL_GATHER: "<b>Ring schedule</b>: n&minus;1 steps; in each, every rank forwards the chunk "
    "it received last (S/n bytes per link).",
    Collective.BROADCAST: "<b>Ring schedule</b>: pipelined along the ring from the root, chunk by chunk; "
    "with n chunks that is 2(n&minus;1) steps (NCCL uses many more, smaller chunks, "
    "so the cost tends to S/B).",
    Collective.REDUCE: "<b>Ring schedule</b>: pipelined along the ring into the root, each rank adding "
    "its chunk to the partial sum that passes; 2(n&minus;1) steps with n chunks.",
    Collective.SCATTER: "NCCL has no ring algorithm for scatter (it is point-to-point sends), so the "
    "ring schedule shows the conceptual step.",
    Collective.ALL_TO_ALL: "NCCL has no ring algorithm for all-to-all (it is point-to-point sends), so "
    "the ring schedule shows the conceptual step.",
}


_TIMES: dict[Collective | None, str] = {
    Collective.ALL_REDUCE: "every step moves one chunk over every link and pays one latency, "
    "α + S/(nB); 2(n&minus;1) steps.",
    Collective.REDUCE_SCATTER: "every step costs α + S/(nB); n&minus;1 steps.",
    Collective.ALL_GATHER: "every step costs α + S/(nB); n&minus;1 steps.",
    Collective.BROADCAST: "the model is S/B + (n&minus;1)α, as NCCL pipelines many small pieces. Along "
    "the critical path the first bytes cross n&minus;1 hops, one latency each (the first n&minus;1 "
    "steps), then the message streams through the last link, n chunks of S/(nB) (the last n steps).",
    Collective.REDUCE: "the model is S/B + (n&minus;1)α, as NCCL pipelines many small pieces. Along "
    "the critical path the first bytes cross n&minus;1 hops, one latency each (the first n&minus;1 "
    "steps), then the message streams through the last link, n chunks of S/(nB) (the last n steps).",
    None: "the single step costs the whole operation as the ring model has it.",
}


def _bytes(value: float) -> str:
    return units.format_quantity(value, "B", binary=True)


def _interconnect_name(key: str) -> str:
    """The name of interconnect preset ``key`` ("NVLink 4"); the key itself for one that is
    not built in (a user's own), "" for none."""
    if not key:
        return ""
    try:
        return presets.interconnect_by_key(key).name
    except KeyError:
        return key


def _describe_rank(row, r: int, n: int, symbolic: bool) -> str:
    """What one rank's buffer holds, in words. With ``symbolic`` the rank's own index reads
    "r", so ranks that hold "the same thing relative to themselves" read the same."""

    def idx(i: int) -> str:
        return "r" if symbolic and i == r else str(i)

    filled = [(j, c) for j, c in enumerate(row) if c is not None]
    if not filled:
        return "nothing"
    parts = []
    for j, content in filled:
        sources = sorted({s for s, _ in content})
        chunk = min(ci for _, ci in content)
        parts.append((j, chunk, sources))
    full = all(len(src) == n for _, _, src in parts)
    single = all(len(src) == 1 for _, _, src in parts)
    if full and all(chunk == j for j, chunk, _ in parts):
        if len(parts) == n:
            return "the sum of every chunk over all ranks"
        chunks = ", ".join(idx(chunk) for _, chunk, _ in parts)
        return (
            f"the sum of chunk {chunks} over all ranks"
            if len(parts) == 1
            else f"the sums of chunks {chunks} over all ranks"
        )
    if single:
        sources = {src[0] for _, _, src in parts}
        if len(sources) == 1:
            s = next(iter(sources))
            if len(parts) == n and all(chunk == j for j, chunk, _ in parts):
                return "all of its own chunks" if s == r else f"all chunks of rank {idx(s)}"
            if len(parts) == 1:
                j, chunk, _ = parts[0]
                return (
                    f"its own chunk {idx(chunk)}"
                    if s == r
                    else f"chunk {idx(chunk)} of rank {idx(s)}"
                )
        if len(parts) == n and all(src[0] == j for j, _, src in parts):
            chunks = {chunk for _, chunk, _ in parts}
            if all(chunk == j for j, chunk, _ in parts):
                return "chunk j of every rank j (one chunk from each rank)"
            if len(chunks) == 1:
                return f"chunk {idx(next(iter(chunks)))} of every rank"
    words = []
    for _j, chunk, src in parts[:3]:
        if len(src) == n:
            words.append(f"sum of chunk {idx(chunk)}")
        elif len(src) == 1:
            words.append(f"chunk {idx(chunk)} of rank {idx(src[0])}")
        else:
            words.append(f"chunk {idx(chunk)} summed over {len(src)} ranks")
    return ", ".join(words) + (", …" if len(parts) > 3 else "")


def final_state_rows(collective: Collective, buffers, root: int | None) -> list[ResultRow]:
    """Results rows saying what every rank holds in ``buffers`` (the last frame), grouped:
    "Every rank r holds: the sum of chunk r over all ranks"."""
    n = len(buffers)
    tip = "What each rank's buffer holds after the last step"
    rows: list[ResultRow] = []
    ranks = list(range(n))
    if root is not None:
        rows.append(
            ResultRow(
                f"Root (rank {root}) holds", _describe_rank(buffers[root], root, n, False), "", tip
            )
        )
        ranks.remove(root)
    groups: dict[str, list[int]] = defaultdict(list)
    for r in ranks:
        groups[_describe_rank(buffers[r], r, n, True)].append(r)
    if len(groups) == 1:
        text = next(iter(groups))
        who = "Every other rank" if root is not None else "Every rank"
        uses_r = any(word in ("r", "r,") for word in text.replace("r)", "r").split())
        rows.append(ResultRow(f"{who} r holds" if uses_r else f"{who} holds", text, "", tip))
        return rows
    for r in ranks[:8]:
        rows.append(ResultRow(f"Rank {r} holds", _describe_rank(buffers[r], r, n, False), "", tip))
    if len(ranks) > 8:
        rows.append(ResultRow("…", f"{len(ranks) - 8} more ranks", "", tip))
    return rows


class CollectivePanel(PanelBase):
    kind = "collective"
    title = "Collectives"

    def __init__(self, catalog, scenario=None, parent=None, *, undo_stack=None):
        self.catalog = catalog
        self._key: tuple | None = None
        #: the scenario last handed to the analysis: kept while only the step changes
        self._analysed: CollectiveScenario | None = None
        self._filled: CollectiveAnalysis | None = None  # the analysis the results table shows
        self._final: tuple[tuple, list[ResultRow]] | None = None
        super().__init__(
            scenario if scenario is not None else CollectiveScenario(),
            parent,
            undo_stack=undo_stack,
        )
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)

        # -- inputs ------------------------------------------------------------------------
        self.collective_combo = self.add_choice(
            "collective", [(c.label, c.value) for c in Collective], "Collective"
        )
        self.ranks_field = self.add_int_field(
            "n_ranks", "Ranks", minimum=MIN_RANKS, maximum=MAX_RANKS
        )
        self.schedule_combo = self.add_choice("schedule", SCHEDULE_CHOICES, "Schedule")
        self.size_field = self.add_quantity_field(
            "message_bytes", "Message size", "B", binary=True, minimum=0, min_inclusive=False
        )
        self.root_field = self.add_int_field(
            "root", "Root rank", minimum=0, maximum=MAX_RANKS - 1
        )
        self.collective_combo.setToolTip("The collective operation to animate")
        self.ranks_field.setToolTip("Number of ranks (GPUs) taking part, 2 to 64")
        self.schedule_combo.setToolTip(
            "Conceptual: the whole operation as one step, straight from its "
            "definition. Ring: NCCL's ring algorithm, one step per chunk hop"
        )
        self.size_field.setToolTip(
            "Size S of each rank's buffer; it is cut into one chunk per rank"
        )
        self.root_field.setToolTip("The rank that sends (broadcast, scatter) or receives (reduce)")
        self._build_link_form()

        # -- chart: the drawing over the transport bar --------------------------------------
        self.view = CollectiveView()
        self.add_chart(self.view, 1)
        self.export_menu.addSeparator()
        self.action_export_animation = self._action(
            "Animation (GIF, APNG, PNG sequence)…",
            "Export every step as an animated GIF or APNG, or as numbered PNG images",
            self.export_animation_interactive, "actionExportAnimation", add=False,
        )
        self.export_menu.addAction(self.action_export_animation)
        self.add_chart(self._build_transport(), 0)

        self._timer = QTimer(self)
        self._timer.setObjectName("playTimer")
        self._timer.timeout.connect(self._tick)
        self._set_speed(DEFAULT_SPEED)

        self.refresh()

    def _build_link_form(self) -> None:
        """Link bandwidth and latency, bound to the scenario, and where they come from."""
        self.add_section("Cost (alpha-beta model)")
        self.link_field = self.add_quantity_field(
            "link_bw", unit="B/s", minimum=0, min_inclusive=False,
            description="Bandwidth B of one link in one direction, bytes/s (GB = 1e9 B)",
        )
        self.alpha_field = self.add_quantity_field(
            "alpha", unit="s", minimum=0,
            description="Latency α of one algorithm step (a few µs on NVLink, 5-20 µs across nodes)",
        )
        self.link_note = QLabel(self.form_widget)
        self.link_note.setObjectName("linkNote")
        self.link_note.setWordWrap(True)
        self.link_note.setTextFormat(Qt.TextFormat.PlainText)
        self.link_note.setForegroundRole(QPalette.ColorRole.PlaceholderText)  # muted, in every theme
        self.form.addRow(self.link_note)  # its text comes with the first refresh

    def _build_transport(self) -> QWidget:
        bar = QWidget()
        bar.setObjectName("transportBar")
        layout = QHBoxLayout(bar)
        layout.setContentsMargins(8, 4, 8, 4)

        def button(text: str, tip: str, name: str, slot) -> QToolButton:
            b = QToolButton(bar)
            b.setText(text)
            b.setToolTip(tip)
            b.setObjectName(name)
            b.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # keys keep stepping the drawing
            b.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
            b.clicked.connect(slot)
            layout.addWidget(b)
            return b

        self.first_button = button("First", "Go to the start (Home)", "firstButton", self.first)
        self.prev_button = button(
            "Previous", "One step back (Left)", "previousButton", self.previous
        )
        self.play_button = button("Play", "Play the steps (Space)", "playButton", self.toggle_play)
        self.play_button.setMinimumWidth(
            self.play_button.fontMetrics().horizontalAdvance("Pause") + 24
        )
        self.next_button = button("Next", "One step forward (Right)", "nextButton", self.next)
        self.last_button = button("Last", "Go to the last step (End)", "lastButton", self.last)

        self.step_slider = QSlider(Qt.Orientation.Horizontal, bar)
        self.step_slider.setObjectName("stepSlider")
        self.step_slider.setAccessibleName("Step")
        self.step_slider.setPageStep(1)
        self.step_slider.setTickPosition(QSlider.TickPosition.TicksBelow)
        self.step_slider.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.step_slider.setToolTip("Step (0 is the state before the first transfer)")
        self.step_slider.valueChanged.connect(self.go_to)
        layout.addWidget(self.step_slider, 1)

        layout.addWidget(QLabel("Step", bar))
        self.step_spin = QSpinBox(bar)
        self.step_spin.setObjectName("stepSpin")
        self.step_spin.setAccessibleName("Step number")
        self.step_spin.setToolTip("Step (0 is the state before the first transfer)")
        self.step_spin.valueChanged.connect(self.go_to)
        layout.addWidget(self.step_spin)
        self.step_total = QLabel(bar)
        layout.addWidget(self.step_total)

        layout.addSpacing(12)
        layout.addWidget(QLabel("Speed", bar))
        self.speed_combo = QComboBox(bar)
        self.speed_combo.setObjectName("speedCombo")
        self.speed_combo.setAccessibleName("Animation speed")
        self.speed_combo.setToolTip("Playback speed")
        for text, ms in SPEEDS:
            self.speed_combo.addItem(text, ms)
        self.speed_combo.setCurrentIndex(DEFAULT_SPEED)
        self.speed_combo.currentIndexChanged.connect(self._set_speed)
        layout.addWidget(self.speed_combo)
        return bar

    # -- the model's answers ------------------------------------------------------------------
    def analysed_scenario(self) -> CollectiveScenario:
        """The step on screen is no input of the analysis: the scenario is handed over as it was
        when a field other than the step last changed, so a step of the animation finds the
        analysis kept and computes nothing."""
        live = self._scenario
        if not _same_but_the_step(self._analysed, live):
            self._analysed = live
        return self._analysed

    def collective(self) -> Collective:
        return Collective(self._scenario.collective)

    def frames(self) -> list[Frame]:
        """Every frame of the current scenario (frame 0 is the start)."""
        self.ensure_drawn()  # a panel behind another tab draws what it put off before it is read
        return list(self.analysis().frames)

    def last_step(self) -> int:
        return self.analysis().last_step

    def current_step(self) -> int:
        """The step on screen (the scenario's step, clamped to this collective's last)."""
        return min(self._scenario.step, self.last_step())

    def current_frame(self) -> Frame:
        return self.analysis().frames[self.current_step()]

    def step_times(self) -> list[StepTime]:
        """The alpha-beta time of every frame (``step_times()[k]`` for frame k)."""
        self.ensure_drawn()
        return list(self.analysis().times)

    def total_time(self) -> float:
        """Seconds of the whole collective: the sum of the step times (0 when they cannot be
        costed)."""
        self.ensure_drawn()
        total = self.analysis().total_time
        return total if total is not None else 0.0

    # -- the link the steps are costed on -------------------------------------------------------
    def plan_link(self) -> tuple[float, float, str] | None:
        """(bytes/s, alpha, name) of the run plan's data-parallel ring, the link the scenario
        follows (None without a predictable plan)."""
        return self.analysis().plan_link

    def link_source(self) -> str:
        """Where the scenario's link comes from: "plan" (the run plan's ring, followed),
        "default" (the All-reduce calculator's defaults, with no plan to follow) or "own"
        (typed, or kept from a scenario opened or restored with Local override)."""
        return self._link_source(self.plan_link())

    def _link_source(self, plan: tuple[float, float, str] | None) -> str:
        if plan is not None:
            return "plan" if self._has_link(plan) and not self._override_context else "own"
        default = CollectiveScenario()
        sc = self._scenario
        if (sc.link_bw, sc.alpha, sc.interconnect) == (default.link_bw, default.alpha, default.interconnect):
            return "default"
        return "own"

    def _has_link(self, link: tuple[float, float, str]) -> bool:
        sc = self._scenario
        return (math.isclose(sc.link_bw, link[0], rel_tol=1e-9)
                and math.isclose(sc.alpha, link[1], rel_tol=1e-9, abs_tol=1e-15))

    def _show_link_note(self) -> None:
        if self._scenario is None or self.is_stale():
            return  # a panel behind a tab says it when it draws
        try:
            plan = self.plan_link()
        except ValueError:
            return  # the status line says what cannot be computed
        source = self._link_source(plan)
        if source == "plan":
            where = f", on {plan[2]}" if plan[2] else ""
            text = f"From the run plan: the ring of its data-parallel collectives{where}."
        elif source == "default":
            text = "The All-reduce calculator's defaults (no run plan)."
        elif plan is not None and self._has_link(plan):
            text = "The run plan's link, kept while this panel keeps its own inputs (Local override)."
        else:
            preset = _interconnect_name(self._scenario.interconnect)
            text = f"This panel's own link, on {preset}." if preset else "This panel's own link."
            if plan is not None:
                text += (f" The run plan's ring: {units.format_quantity(plan[0], 'B/s')}, "
                         f"α {units.format_quantity(plan[1], 's')}.")
        if self.link_note.text() != text:  # a word-wrapped label relays the form out
            self.link_note.setText(text)

    def _update_plan_banner(self) -> None:
        super()._update_plan_banner()
        self._show_link_note()  # the plan, the override and the link all change what it says

    # -- editing --------------------------------------------------------------------------------
    def edit(self, *, _text: str | None = None, _merge: bool = True, **changes) -> bool:
        """The base edit, with what goes along in the same undo step: a rank count at or
        below the root clamps the root, and a typed link bandwidth or latency is no longer
        the preset's (``interconnect`` cleared)."""
        sc = self._scenario
        if sc is not None:
            n = changes.get("n_ranks")
            if isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= sc.root and "root" not in changes:
                changes["root"] = n - 1
                _text = _text or f"Change ranks to {n} (root rank {n - 1})"
            if {"link_bw", "alpha"} & changes.keys() and "interconnect" not in changes and sc.interconnect:
                if _text is None and len(changes) == 1:
                    try:  # the label of the one field typed, not of the preset cleared with it
                        _text = describe_change(sc, sc.with_changes(**changes))
                    except ValueError:
                        pass  # refused below, next to the field
                changes["interconnect"] = ""
        return super().edit(_text=_text, _merge=_merge, **changes)

    #: the plan sets these (its GPUs, clamped, and its data-parallel ring); typing one makes
    #: the panel keep its own inputs (Local override)
    PLAN_DERIVED_FIELDS = frozenset({"n_ranks", "link_bw", "alpha"})

    # -- navigation (not undoable) ------------------------------------------------------------
    def _set_step(self, step: int) -> None:
        """Show ``step``. Stepping is navigation: the step is kept in the scenario (a saved
        scenario reopens where it was) but no undo command is pushed. Only the step changes,
        so the form is not re-synced (``set_scenario`` would overwrite text being typed while
        the animation plays)."""
        step = max(0, min(int(step), self.last_step()))
        if step != self._scenario.step:
            self._scenario = self._scenario.with_changes(step=step)
            self._show_step()
            self.scenarioChanged.emit(self._scenario)
        else:
            self._show_step()

    def go_to(self, step: int) -> None:
        self._set_step(step)

    def first(self) -> None:
        self._set_step(0)

    def last(self) -> None:
        self.pause()
        self._set_step(self.last_step())

    def next(self) -> None:
        self._set_step(self.current_step() + 1)

    def previous(self) -> None:
        self._set_step(self.current_step() - 1)

    # -- playback -------------------------------------------------------------------------------
    def is_playing(self) -> bool:
        return self._timer.isActive()

    def play(self) -> None:
        if self.current_step() >= self.last_step():
            self._set_step(0)  # play from the end starts over
        self._timer.start()
        self._update_play_button()

    def pause(self) -> None:
        self._timer.stop()
        self._update_play_button()

    def toggle_play(self) -> None:
        self.pause() if self.is_playing() else self.play()

    def _tick(self) -> None:
        self._set_step(self.current_step() + 1)
        if self.current_step() >= self.last_step():
            self.pause()

    def _set_speed(self, index: int) -> None:
        self._timer.setInterval(SPEEDS[index][1])

    def _update_play_button(self) -> None:
        playing = self._timer.isActive()
        self.play_button.setText("Pause" if playing else "Play")
        self.play_button.setToolTip("Pause (Space)" if playing else "Play the steps (Space)")

    def hideEvent(self, event) -> None:  # noqa: N802 - Qt naming
        self.pause()
        super().hideEvent(event)

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt naming
        self.pause()
        super().closeEvent(event)

    def keyPressEvent(self, event) -> None:  # noqa: N802 - Qt naming
        key = event.key()
        actions = {
            Qt.Key.Key_Right: self.next,
            Qt.Key.Key_Left: self.previous,
            Qt.Key.Key_Space: self.toggle_play,
            Qt.Key.Key_Home: self.first,
            Qt.Key.Key_End: self.last,
        }
        if key in actions and not event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier:
            if key in (Qt.Key.Key_Right, Qt.Key.Key_Left, Qt.Key.Key_Home):
                self.pause()
            actions[key]()
            event.accept()
            return
        super().keyPressEvent(event)

    # -- drawing ------------------------------------------------------------------------------
    def refresh(self) -> None:
        sc = self._scenario
        if sc is None:
            return
        a = self.analysis()
        c = a.collective
        key = (c, sc.n_ranks, sc.schedule, sc.root, sc.message_bytes)
        if key != self._key:
            shape = (c, sc.n_ranks)
            if self._key is None or self._key[:2] != shape:
                # the root's field and the step range change with the collective and ranks,
                # not with the message size: a size edit leaves them (and their layout) alone
                self.root_field.setEnabled(c.has_root)
                self.root_field.set_bounds(0, sc.n_ranks - 1, integer=True)
                self.root_field.setToolTip(
                    "The rank that sends (broadcast, scatter) or receives (reduce)"
                    if c.has_root
                    else f"{c.label} has no root rank"
                )
            self._key = key
            last = a.last_step
            for w in (self.step_slider, self.step_spin):
                if w.maximum() != last:
                    w.blockSignals(True)
                    w.setRange(0, last)
                    w.blockSignals(False)
            if self.step_total.text() != f"of {last}":
                self.step_total.setText(f"of {last}")
        if a is not self._filled:  # a redraw of the same analysis (a theme change) keeps the table
            self._filled = a
            if a.times_problem:  # the drawing stays, without times
                self.show_status(f"No step times: {a.times_problem}")
            self._fill_results(sc, a)
        self._show_step()
        self._show_link_note()

    def _show_step(self) -> None:
        a = self.analysis()
        step = min(self._scenario.step, a.last_step)
        self.show_frame_in(self.view, a.frames[step])
        for w in (self.step_slider, self.step_spin):
            if w.value() != step:
                w.blockSignals(True)
                w.setValue(step)
                w.blockSignals(False)
        last = a.last_step
        self.first_button.setEnabled(step > 0)
        self.prev_button.setEnabled(step > 0)
        self.next_button.setEnabled(step < last)
        self.last_button.setEnabled(step < last)

    def show_frame_in(self, view: CollectiveView, frame: Frame) -> None:
        """Draw ``frame`` of this scenario in ``view`` (the panel's, or an export's)."""
        sc = self._scenario
        a = self.analysis()
        c = a.collective
        view.show_frame(
            frame,
            collective=c,
            n=sc.n_ranks,
            root=sc.root if c.has_root else None,
            context=self.context_line(),
            chunk_text=_bytes(a.chunk_bytes),
            times=a.times,
            elapsed=a.elapsed,
        )

    def context_line(self) -> str:
        """The small line over the drawing: what is animated, on which link."""
        sc = self._scenario
        c = self.collective()
        schedule = dict((v, t) for t, v in SCHEDULE_CHOICES).get(sc.schedule, sc.schedule).lower()
        text = f"{c.label} · {schedule} schedule · {sc.n_ranks} ranks · message {_bytes(sc.message_bytes)}"
        if c.has_root:
            text += f" · root rank {sc.root}"
        return text + (f" · link {units.format_quantity(sc.link_bw, 'B/s')}, "
                       f"α {units.format_quantity(sc.alpha, 's')}")

    def _fill_results(self, sc: CollectiveScenario, a: CollectiveAnalysis) -> None:
        c = a.collective
        n = sc.n_ranks
        moved = a.traffic
        per_rank = list(moved.bytes_sent_per_rank)
        rows = [
            ResultRow(
                "Steps",
                str(moved.steps),
                "",
                f"Steps of the {sc.schedule} schedule (the slider also shows step 0, the start)",
            ),
            ResultRow(
                "Chunk (message ÷ ranks)",
                a.chunk_bytes,
                "B",
                "Size of one cell in the drawing",
                binary=True,
            ),
            ResultRow(
                "Bytes per link per step",
                moved.busiest_link_bytes,
                "B",
                "Bytes the busiest link carries in one step (the most over all steps)",
                binary=True,
            ),
        ]
        if len(set(per_rank)) <= 1:
            rows.append(
                ResultRow(
                    "Bytes sent per rank (all steps)",
                    per_rank[0] if per_rank else 0.0,
                    "B",
                    "Every rank sends the same",
                    binary=True,
                )
            )
        else:
            top = max(range(n), key=lambda r: per_rank[r])
            rows.append(
                ResultRow(
                    f"Bytes sent by the busiest rank (rank {top})",
                    per_rank[top],
                    "B",
                    "The ranks send different amounts; this is the most any one sends",
                    binary=True,
                )
            )
        rows += self._time_rows(a)
        rows.append(
            ResultRow(
                "Bus factor (nccl-tests)",
                f"{a.bus_factor:.4g}",
                "",
                "Bus bandwidth = algorithm bandwidth × this factor (nccl-tests' busbw)",
            )
        )
        root = sc.root if c.has_root else None
        final_key = (c, n, sc.schedule, root)
        if self._final is None or self._final[0] != final_key:
            # what every rank holds at the end does not depend on the size or the link
            self._final = (final_key, final_state_rows(c, a.frames[-1].buffers, root))
        rows += self._final[1]
        self.results.set_rows(rows)

    @staticmethod
    def _time_rows(a: CollectiveAnalysis) -> list[ResultRow]:
        if not a.times:
            return [ResultRow("Time, whole collective (ring model)", None, "s", "Could not be computed")]
        steps = [t.seconds for t in a.times[1:]]
        same = "the All-reduce calculator's ring time for this collective, size, ranks, link bandwidth and latency"
        rows = [
            ResultRow(
                "Time, whole collective (ring model)",
                a.total_time,
                "s",
                f"The sum of the step times: {same}",
            )
        ]
        if len(steps) > 1 and max(steps) - min(steps) <= 1e-12 * max(steps):
            rows.append(ResultRow("Time per step", steps[0], "s",
                                  "Every step: one latency α plus one chunk over the link (S/n ÷ B)"))
        elif len(steps) > 1:
            rows.append(ResultRow("Longest step", max(steps), "s",
                                  "The steps differ: the pipeline pays latency while it fills and "
                                  "bandwidth while the message streams through the last link"))
        return rows

    # -- toolbar hooks ------------------------------------------------------------------------
    def explanation(self) -> str:
        """Short rich text: what the current collective does and how the ring runs it."""
        a = self.analysis()
        c = a.collective
        sc = self._scenario
        n = sc.n_ranks
        steps = a.last_step
        if sc.schedule == "conceptual" or c in (Collective.SCATTER, Collective.ALL_TO_ALL):
            c_time = None  # one step: the whole operation's time
        else:
            c_time = c
        lines = [
            f"<h3>{c.label}</h3>",
            f"<p>{_DEFINITIONS[c]}</p>",
            f"<p>{_RING[c]}</p>",
            f"<p>Here: {n} ranks, message S = {_bytes(sc.message_bytes)}, one chunk S/n = "
            f"{_bytes(a.chunk_bytes)}; the {sc.schedule} schedule takes {steps} "
            f"step{'s' if steps != 1 else ''}. Bus factor {a.bus_factor:.4g} "
            "(nccl-tests' busbw = algbw &times; factor).</p>",
            f"<p><b>Time</b> (alpha-beta model, link B = {units.format_quantity(sc.link_bw, 'B/s')}, "
            f"latency α = {units.format_quantity(sc.alpha, 's')} per step): {_TIMES[c_time]} "
            f"The steps add up to {units.format_quantity(self.total_time(), 's')}, the All-reduce "
            "calculator's ring time for the same collective, size, ranks and link. The strip under the "
            "title shows every step as long as its time.</p>",
            "<p><b>Reading the picture</b>: each column is a rank's buffer, one cell per chunk, coloured "
            "by chunk index. A pale cell with a bar is a partial sum (Σk/n: k of n ranks added so far), "
            "a saturated cell a complete sum; hatched cells are empty. Arrows are this step's "
            'transfers: a "+" arrow adds into the receiver, a plain arrow copies. In a reduction the '
            "sender's cell empties: its contribution now lives in the sum. With many ranks the cells "
            "say less (Σk/n, then k alone) and at last only their colour; hover a cell to read what "
            "it holds.</p>",
            "<p>Keys: Left / Right step, Space plays or pauses, Home / End jump. Export → Animation "
            "writes every step as a GIF, an APNG or numbered PNGs.</p>",
        ]
        return "\n".join(lines)

    def explanation_title(self) -> str:
        return f"{self.title}: {self.collective().label}"

    def set_comparison(self, items: Iterable) -> None:
        """Comparisons are not drawn on the animator (yet): say so, change nothing."""
        count = len(list(items or ()))
        if count:
            self._note(
                f"The animator shows one scenario at a time; {count} compared scenario"
                f"{'s are' if count != 1 else ' is'} not drawn here."
            )
        else:
            self.clear_comparison()

    def clear_comparison(self) -> None:
        self._note("")

    def _note(self, message: str) -> None:
        self.status.setText(message)
        self.status.setStyleSheet(f"color: {th.current_theme().muted};")
        self.status.setVisible(bool(message))

    # -- export ------------------------------------------------------------------------------
    def chart_for_export(self) -> QWidget:
        return self.view

    def csv_columns(self):
        a = self.analysis()
        frames, times = a.frames, a.times
        columns = [
            (quantity_header("step", ""), [f.step for f in frames]),
            ("title", [f.title for f in frames]),
            (quantity_header("transfers", ""), [len(f.transfers) for f in frames]),
            (quantity_header("bytes per link", "B"), [f.bytes_per_link for f in frames]),
        ]
        if len(times) == len(frames):
            elapsed = list(a.elapsed)
            columns += [
                (quantity_header("latency", "s"), [t.latency_s for t in times]),
                (quantity_header("transfer time", "s"), [t.transfer_s for t in times]),
                (quantity_header("step time", "s"), [t.seconds for t in times]),
                (quantity_header("elapsed", "s"), elapsed),
            ]
        return columns

    def animation_defaults(self) -> AnimationOptions:
        """What the animation export dialog starts from: GIF, 1280 px, the playback speed, a
        caption saying what is animated and what it costs."""
        return AnimationOptions(fmt="gif", width_px=1280, caption=self.animation_caption(),
                                step_ms=int(self._timer.interval()))

    def animation_caption(self) -> Caption:
        """A slide caption: what is animated as the title; the message, ranks, link and the
        model's time as the assumptions."""
        sc = self._scenario
        a = self.analysis()
        steps = a.last_step
        title = f"{a.collective.label} on {sc.n_ranks} ranks, {sc.schedule} schedule"
        parts = [default_assumptions(sc)]  # the message, ranks and the scenario's link
        if a.times:
            parts.append(f"{units.format_quantity(a.total_time, 's')} in {steps} "
                         f"step{'s' if steps != 1 else ''} (alpha-beta model)")
        return Caption(title, " · ".join(parts))

    def export_animation(self, path, fmt: str = "gif", *, width_px: int = 1280,
                         caption: Caption | None = None, step_ms: int | None = None,
                         background: str = "white", progress=None):
        """Write the animation without a dialog: ``fmt`` "gif", "apng" or "png_sequence",
        frames ``width_px`` wide under ``caption`` (None: :meth:`animation_caption`; an
        empty ``Caption()`` for none). Returns the files written (see
        :func:`ui.animation_export.export_animation`)."""
        self.pause()
        self.ensure_drawn()
        options = replace(self.animation_defaults(), fmt=fmt, width_px=width_px, background=background,
                          caption=self.animation_caption() if caption is None else caption)
        if step_ms is not None:
            options = replace(options, step_ms=step_ms)
        return animation_export.export_animation(self, path, options, progress=progress)

    def export_animation_interactive(self):
        """Export menu: ask for format, width and caption, then for the file."""
        self.pause()
        self.ensure_drawn()
        written = animation_export.export_animation_interactive(self, self.animation_defaults())
        if written:
            where = written[0] if len(written) == 1 else f"{len(written)} files from {written[0].name}"
            self._note(f"Exported the animation: {where}")
        return written

    def export_to(self, fmt: str, path, *, width_px: int = 1920, background="white"):
        with self.view.export_style(background if fmt in ("png", "svg") else "transparent"):
            return super().export_to(fmt, path, width_px=width_px, background=background)


__all__ = ["CollectivePanel", "final_state_rows"]
