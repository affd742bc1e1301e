"""The All-reduce calculator's analysis (``workbench.analyses.allreduce``): every number it holds
is what ``workbench.comms_sweep`` and ``workbench.link_health`` give for the same inputs, with a
plan and without, and a log that cannot be read is kept with its reason."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import presets.catalog
from workbench import InputError, comms_sweep, link_health
from workbench import workspace as ws
from workbench.analyses import allreduce
from workbench.analyses.allreduce import LINK_CLASS_MARKS, AllReduceAnalysis, analyse, read_log
from workbench.plan import predict
from workbench.scenarios import AllReduceScenario

CATALOG = presets.catalog.BUILTIN
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "nccl"
HEALTHY = (FIXTURES / "h100-node-healthy-allreduce.txt").read_text()
TWO_NODES = (FIXTURES / "h100-2node-nic400-allreduce.txt").read_text()
SENDRECV = (FIXTURES / "h100-node-sendrecv.txt").read_text()


def _plan_view() -> ws.PlanView:
    plan = ws.DEFAULT_PLAN
    return ws.PlanView(plan=plan, hardware=CATALOG.hardware(plan.hardware), prediction=predict(plan, CATALOG))


def _same_arrays(a, b) -> None:
    """Two result records of the same type hold equal values, arrays compared element-wise."""
    assert type(a) is type(b)
    for name, value in vars(a).items():
        other = getattr(b, name)
        if isinstance(value, np.ndarray):
            assert np.array_equal(value, other), name
        else:
            assert value == other, name


def _model_numbers(a: AllReduceAnalysis, s: AllReduceScenario) -> None:
    op = s.collective
    _same_arrays(a.sweep, comms_sweep.sweep(op, s.n_ranks, s.link_bw, s.alpha, s.size_min, s.size_max))
    assert a.point == comms_sweep.operating_point(op, s.size_bytes, s.n_ranks, s.link_bw, s.alpha)
    top = max(comms_sweep.RANKS_MAX, s.n_ranks)
    ranks = comms_sweep.rank_sweep(op, s.size_bytes, s.link_bw, s.alpha, comms_sweep.RANKS_MIN, top)
    _same_arrays(a.ranks, ranks)
    assert a.latency_from == comms_sweep.latency_takes_over(op, s.size_bytes, s.link_bw, s.alpha, top)
    at_n = ranks.ranks == s.n_ranks
    assert a.rank_point_time == (float(ranks.best[at_n][0]) if at_n.any() else a.point.best_time)
    bandwidths = comms_sweep.bandwidth_sweep(op, s.size_bytes, s.n_ranks, s.alpha, min(1e9, s.link_bw / 2),
                                             max(2e12, s.link_bw * 2))
    _same_arrays(a.bandwidths, bandwidths)


def test_the_default_scenario_without_a_plan_holds_the_sweep_s_numbers():
    s = AllReduceScenario()
    a = analyse(s, None, CATALOG)
    _model_numbers(a, s)
    assert a.logs == () and a.readable_logs == ()
    # the link classes marked: the presets asked for and the NIC between nodes, slowest first
    keys = [ic.key for ic in a.link_classes]
    assert set(keys) == {*LINK_CLASS_MARKS, s.inter_node}
    rates = [ic.bw_per_direction for ic in a.link_classes]
    assert rates == sorted(rates) and a.link_classes[-1] == CATALOG.interconnect("nvlink-5")


def test_a_scenario_that_follows_the_plan_is_analysed_on_the_plan_s_ring():
    view = _plan_view()
    s = ws.follow_plan("allreduce", AllReduceScenario(), view)
    assert s != AllReduceScenario() and s.n_ranks == max(2, view.plan.replicas)
    a = analyse(s, view, CATALOG)
    _model_numbers(a, s)
    assert a.point.size_bytes == s.size_bytes  # the plan's gradient shard
    # the plan is in the scenario already: without the view the numbers are the same
    alone = analyse(s, None, CATALOG)
    assert alone.point == a.point and alone.latency_from == a.latency_from
    # and through the workspace, as the document asks for it
    assert ws.analyse("allreduce", s, view, CATALOG).point == a.point


def test_each_log_is_what_the_log_functions_give():
    s = AllReduceScenario(n_ranks=4, **AllReduceScenario.log_fields([("one", HEALTHY), ("two", TWO_NODES),
                                                                     ("three", SENDRECV)]))
    a = analyse(s, None, CATALOG)
    assert [entry.name for entry in a.logs] == ["one", "two", "three"]
    for entry, (_name, text) in zip(a.logs, s.logs, strict=True):
        log = comms_sweep.analyze_log(text, s.collective)
        assert entry.error == "" and np.array_equal(entry.log.sizes, log.sizes)
        assert np.array_equal(entry.log.times, log.times) and entry.log.fit == log.fit
        assert entry.health == link_health.classify(log.result, CATALOG, s.inter_node)
        assert entry.layout == link_health.node_layout(log.result)
        lo, hi = float(log.sizes.min()), float(log.sizes.max())
        xs, ys = log.fit_curve(comms_sweep.size_grid(lo, hi, 8))
        assert np.array_equal(entry.fit_sizes, xs) and np.array_equal(entry.fit_times, ys)
        assert entry.ring_parameters == log.fitted_ring_parameters(log.collective, log.n_ranks)
        # each log against its own collective and ranks on the link its devices should reach
        expected = entry.health.expected
        model = comms_sweep.sweep(log.collective, log.n_ranks, expected.achievable_bw, expected.alpha, lo, hi)
        _same_arrays(entry.model, model)
        assert entry.model_link == expected.name
    healthy, two, sendrecv = a.logs
    assert healthy.time_at_size == healthy.log.time_at(s.size_bytes) is not None
    assert two.time_at_size == two.log.time_at(s.size_bytes)
    assert sendrecv.time_at_size is None  # not the form's collective: not on its rank chart
    assert two.model_link.startswith("2 nodes with NVLink 4 inside")


def test_a_log_that_is_the_form_s_own_model_has_no_model_of_its_own():
    nvlink = CATALOG.interconnect("nvlink-4")
    s = AllReduceScenario(n_ranks=8, link_bw=nvlink.achievable_bw, alpha=nvlink.latency_s,
                          **AllReduceScenario.log_fields([("one", HEALTHY)]))
    (entry,) = analyse(s, None, CATALOG).logs
    assert entry.model is None and entry.model_link == ""


def test_a_log_that_cannot_be_read_is_kept_with_its_reason_and_the_rest_is_shown():
    s = AllReduceScenario(**AllReduceScenario.log_fields([("notes.txt", "no results here\n"), ("ok", HEALTHY)]))
    a = analyse(s, None, CATALOG)
    bad, good = a.logs
    with pytest.raises(InputError) as err:
        comms_sweep.analyze_log("no results here\n", s.collective)
    assert bad.log is None and bad.error == str(err.value).removeprefix("text: ") and bad.error
    assert bad.health is None and bad.model is None and bad.ring_parameters is None
    assert good.log is not None and a.readable_logs == (good,)
    _model_numbers(a, s)


def test_a_nic_the_catalog_does_not_have_is_refused_naming_the_field():
    s = AllReduceScenario(inter_node="nic-9000g", **AllReduceScenario.log_fields([("two", TWO_NODES)]))
    with pytest.raises(InputError) as err:
        analyse(s, None, CATALOG)
    assert err.value.parameter == "inter_node" and "nic-9000g" in str(err.value)
    # a log on one node crosses no NIC: the same choice analyses
    assert analyse(s.with_changes(**AllReduceScenario.log_fields([("one", HEALTHY)])), None, CATALOG).logs


def test_a_log_is_parsed_once_for_its_text_and_collective(monkeypatch):
    calls = []
    real = comms_sweep.analyze_log
    monkeypatch.setattr(comms_sweep, "analyze_log", lambda text, collective=None: calls.append(1)
                        or real(text, collective))
    monkeypatch.setattr(allreduce, "_READ", type(allreduce._READ)())
    first = read_log(HEALTHY, "all_reduce")
    s = AllReduceScenario(**AllReduceScenario.log_fields([("one", HEALTHY)]))
    assert analyse(s, None, CATALOG).logs[0].log is first[0]
    assert analyse(s.with_changes(size_bytes=2.0**20), None, CATALOG).logs[0].log is first[0]
    assert len(calls) == 1
    read_log(HEALTHY, "all_gather")  # another form's collective is another reading
    assert len(calls) == 2
    refused = read_log("nothing", None)  # a refusal is kept too
    assert refused[0] is None and refused[1] and read_log("nothing", None) is refused and len(calls) == 3
