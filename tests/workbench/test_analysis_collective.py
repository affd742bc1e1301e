"""The Collectives animator's analysis (``workbench.analyses.collective``): the schedule, its
traffic and its step costs are what ``workbench.collectives`` gives, the steps add up to the
All-reduce calculator's time, and the step on screen is no input."""

from __future__ import annotations

import pytest

import presets.catalog
from workbench import InputError, collectives, comms, comms_sweep
from workbench import workspace as ws
from workbench.analyses import collective as analysis_module
from workbench.analyses.collective import PlanLink, analyse
from workbench.collectives import Collective
from workbench.plan import predict, sync_link_rate
from workbench.scenarios import AllReduceScenario, CollectiveScenario

CATALOG = presets.catalog.BUILTIN


def _plan_view(plan=ws.DEFAULT_PLAN) -> ws.PlanView:
    return ws.PlanView(plan=plan, hardware=CATALOG.hardware(plan.hardware), prediction=predict(plan, CATALOG))


def _expected(sc: CollectiveScenario):
    c = Collective(sc.collective)
    chunk = collectives.chunk_size(sc.message_bytes, sc.n_ranks)
    frames = collectives.frames(c, sc.n_ranks, sc.schedule, sc.root, chunk)
    times = collectives.step_times(c, sc.n_ranks, sc.schedule, sc.message_bytes, sc.link_bw, sc.alpha,
                                   root=sc.root)
    return c, chunk, frames, times


@pytest.mark.parametrize("sc", [
    CollectiveScenario(),
    CollectiveScenario(collective="broadcast", n_ranks=6, root=2, message_bytes=2.0**24),
    CollectiveScenario(collective="all_to_all", schedule="conceptual", n_ranks=8),
    CollectiveScenario(collective="reduce_scatter", n_ranks=16, link_bw=50e9, alpha=12e-6),
], ids=["defaults", "broadcast", "all-to-all", "reduce-scatter"])
def test_the_schedule_and_its_costs_are_the_collectives_module_s(sc):
    a = analyse(sc, None, CATALOG)
    c, chunk, frames, times = _expected(sc)
    assert a.collective is c and a.chunk_bytes == chunk
    assert a.frames == tuple(frames) and a.last_step == len(frames) - 1
    assert a.times == tuple(times)
    assert a.elapsed == tuple(collectives.total_time(times[: k + 1]) for k in range(len(times)))
    assert a.total_time == collectives.total_time(times) == a.elapsed[-1]
    assert a.traffic == collectives.traffic(frames, sc.n_ranks)
    assert a.bus_factor == float(comms.bus_factor(c, sc.n_ranks))
    assert a.times_problem == "" and a.plan_link is None  # no plan, no plan link


def test_a_ring_all_reduce_adds_up_to_the_calculator_s_ring_time():
    sc = CollectiveScenario(n_ranks=8, message_bytes=2.0**30)
    calc = AllReduceScenario(n_ranks=8, size_bytes=2.0**30, link_bw=sc.link_bw, alpha=sc.alpha)
    point = comms_sweep.operating_point(calc.collective, calc.size_bytes, calc.n_ranks, calc.link_bw, calc.alpha)
    assert analyse(sc, None, CATALOG).total_time == pytest.approx(point.ring_time, rel=1e-12)


@pytest.mark.parametrize("n_gpus", [ws.DEFAULT_PLAN.n_gpus, 64], ids=["default-plan", "eight-nodes"])
def test_a_scenario_that_follows_the_plan_is_costed_on_the_plan_s_ring(n_gpus):
    view = _plan_view(ws.DEFAULT_PLAN.with_changes(n_gpus=n_gpus))
    sc = ws.follow_plan("collective", CollectiveScenario(), view)
    a = analyse(sc, view, CATALOG)
    bw, alpha = sync_link_rate(view.plan, view.prediction.links)
    name = view.prediction.links.inter_name if ws.dp_spans_nodes(view.plan) else view.prediction.links.intra_name
    assert a.plan_link == PlanLink(float(bw), float(alpha), name)
    assert (sc.link_bw, sc.alpha) == (a.plan_link.bandwidth, a.plan_link.alpha) and sc.n_ranks == n_gpus
    _c, _chunk, frames, times = _expected(sc)
    assert a.frames == tuple(frames) and a.times == tuple(times)
    assert a.times[1].latency_s == a.plan_link.alpha
    # without a plan the schedule is the same; only where its link comes from is not known
    alone = analyse(sc, None, CATALOG)
    assert alone.times == a.times and alone.plan_link is None
    # a plan that cannot be predicted gives no link to follow
    assert analyse(sc, ws.PlanView(plan=view.plan), CATALOG).plan_link is None


def test_the_step_on_screen_is_no_input():
    sc = CollectiveScenario(n_ranks=8)
    assert analyse(sc.with_changes(step=5), None, CATALOG) == analyse(sc, None, CATALOG)


def test_steps_that_cannot_be_costed_keep_the_schedule_and_say_why(monkeypatch):
    def overflow(*_args, **_kwargs):
        raise ValueError("link_bw: the time overflows")

    monkeypatch.setattr(collectives, "step_times", overflow)
    sc = CollectiveScenario(n_ranks=8)
    a = analyse(sc, None, CATALOG)
    assert a.times == () and a.elapsed == () and a.total_time is None
    assert a.times_problem == "link_bw: the time overflows"
    assert len(a.frames) == 2 * 7 + 1 and a.traffic.steps == 14  # the drawing stays


def test_a_scenario_of_another_kind_is_refused_naming_the_scenario():
    with pytest.raises(InputError) as err:
        ws.analyse("collective", AllReduceScenario(), None, CATALOG)
    assert err.value.parameter == "scenario"
    assert ws.analysis_function("collective") is analysis_module.analyse
