"""What the Collectives animator shows: the chosen collective's step schedule over its ranks,
what the steps move, and each step's alpha-beta cost (the steps add up to the All-reduce
calculator's time for the same collective, size, ranks and link).

Which step is on screen is not part of this: it is where the animation is, the view's state
(the scenario keeps it so a saved scenario reopens there). Every step is here, so stepping
through them computes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from workbench import collectives, comms
from workbench.catalog import Catalog
from workbench.collectives import Collective, Frame, StepTime, Traffic
from workbench.plan import sync_link_rate
from workbench.scenarios import CollectiveScenario
from workbench.workspace import PlanView, dp_spans_nodes


class PlanLink(NamedTuple):
    """The link of the run plan's data-parallel ring (what the scenario's link follows)."""

    bandwidth: float  # bytes/s of one link in one direction, at the rate the plan's term uses
    alpha: float  # seconds of latency per step
    name: str  # the link's name: the NIC when the ring spans nodes, else the GPUs' own link


@dataclass(frozen=True)
class CollectiveAnalysis:
    """Every step of one collective's schedule, what it moves and what it costs."""

    collective: Collective  # the collective animated
    frames: tuple[Frame, ...]  # every snapshot, frame 0 the start (before any transfer)
    chunk_bytes: float  # bytes of one chunk (one cell of the drawing): the message over the ranks
    traffic: Traffic  # steps, the busiest link's bytes in one step, bytes each rank sends (B)
    bus_factor: float  # nccl-tests' busbw / algbw for this collective on these ranks
    times: tuple[StepTime, ...]  # seconds of every frame (frame 0 costs nothing); () when the
    # steps cannot be costed (see ``times_problem``)
    elapsed: tuple[float, ...]  # seconds from the start to the end of each frame (one per time)
    total_time: float | None  # seconds of the whole collective, the sum of the steps (None: not costed)
    times_problem: str  # why the steps cannot be costed ("" when they are)
    plan_link: PlanLink | None  # the run plan's data-parallel ring (None: no plan, or one that
    # cannot be predicted)

    @property
    def last_step(self) -> int:
        """The last frame's index (the number of steps)."""
        return len(self.frames) - 1


def plan_link(view: PlanView | None) -> PlanLink | None:
    """The ring the plan's data-parallel collectives run on (None without a predicted plan)."""
    if view is None or view.prediction is None:
        return None
    links = view.prediction.links
    bw, alpha = sync_link_rate(view.plan, links)
    return PlanLink(float(bw), float(alpha), links.inter_name if dp_spans_nodes(view.plan) else links.intra_name)


def analyse(scenario: CollectiveScenario, view: PlanView | None, catalog: Catalog) -> CollectiveAnalysis:
    """The schedule of ``scenario``'s collective and its cost on the scenario's link; ``view``
    gives the plan's ring, for saying where that link comes from (``catalog`` is not read).
    Steps that cannot be costed (a time past a float) leave the schedule without times."""
    sc = scenario
    c = collectives.parse_collective(sc.collective)
    chunk = collectives.chunk_size(sc.message_bytes, sc.n_ranks)
    frames = tuple(collectives.frames(c, sc.n_ranks, sc.schedule, sc.root, chunk))
    try:
        times = tuple(collectives.step_times(c, sc.n_ranks, sc.schedule, sc.message_bytes, sc.link_bw,
                                             sc.alpha, root=sc.root))
        problem = ""
    except (ValueError, ArithmeticError) as exc:
        times, problem = (), str(exc) or type(exc).__name__
    elapsed = tuple(collectives.total_time(times[: k + 1]) for k in range(len(times)))
    return CollectiveAnalysis(
        collective=c, frames=frames, chunk_bytes=chunk, traffic=collectives.traffic(frames, sc.n_ranks),
        bus_factor=float(comms.bus_factor(c, sc.n_ranks)), times=times, elapsed=elapsed,
        total_time=elapsed[-1] if elapsed else None, times_problem=problem, plan_link=plan_link(view),
    )


__all__ = ["CollectiveAnalysis", "PlanLink", "analyse", "plan_link"]
