"""The whole footprint: energy against time, capping part of a job, the cap as a command,
idle allocations, network power, embodied emissions, regions and start times."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from workbench import carbon, footprint, power
from workbench._validate import InputError

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "carbon"
#: the profile behind tests/fixtures/carbon/hourly_intensity_two_days.csv (day 1 is 10 lower,
#: day 2 10 higher, and day 2 has no value at 05:00)
PROFILE = (420, 410, 400, 390, 380, 370, 360, 300, 250, 200, 180, 170,
           160, 170, 190, 230, 300, 380, 450, 480, 470, 460, 440, 430)
H = 3600.0


# -- the run the issue names --------------------------------------------------------------------
def test_a_thousand_gpus_for_a_hundred_hours_at_700_w():
    f = footprint.run_footprint(1000, 100 * H, 700.0, pue=1.1, grid_g_per_kwh=400.0)
    assert f.it_energy_j == pytest.approx(1000 * 100 * 0.7 * carbon.J_PER_KWH)  # 70 MWh
    assert f.facility_energy_kwh == pytest.approx(77_000.0)
    assert f.operational_co2e_kg == pytest.approx(30_800.0)
    assert f.total_co2e_kg == f.operational_co2e_kg and f.embodied_co2e_kg is None
    assert f.training_gpu_hours == pytest.approx(100_000.0) and f.idle_gpu_hours == 0.0


def test_the_footprint_without_extras_is_the_carbon_summary():
    s = carbon.run_summary(64, 5 * H, 612.0, 1.2, 475.0, 0.1, 2.5, host_overhead_w_per_gpu=300.0)
    f = footprint.run_footprint(64, 5 * H, 612.0, 1.2, 475.0, host_w_per_gpu=300.0,
                                energy_price_per_kwh=0.1, gpu_hour_price=2.5)
    assert f.it_energy_j == pytest.approx(s.it_energy_j)
    assert f.facility_energy_kwh == pytest.approx(s.facility_energy_kwh)
    assert f.operational_co2e_kg == pytest.approx(s.co2e_kg)
    assert f.total_cost == pytest.approx(s.total_cost)


def test_network_power_adds_to_the_it_energy_and_idle_hours_to_energy_and_cost():
    base = footprint.run_footprint(8, 10 * H, 700.0, 1.0, 400.0, gpu_hour_price=2.0, energy_price_per_kwh=0.1)
    net = footprint.run_footprint(8, 10 * H, 700.0, 1.0, 400.0, network_w_per_gpu=17.5,
                                  gpu_hour_price=2.0, energy_price_per_kwh=0.1)
    assert net.network_energy_j == pytest.approx(8 * 17.5 * 10 * H)
    assert net.it_energy_j - base.it_energy_j == pytest.approx(net.network_energy_j)
    # 5 idle hours at 90 W per GPU slot: energy, CO2e and cost; the GPU-hours are paid anyway
    idle = footprint.run_footprint(8, 10 * H, 700.0, 1.0, 400.0, idle_s=5 * H, idle_power_w_per_gpu=90.0,
                                   gpu_hour_price=2.0, energy_price_per_kwh=0.1)
    assert idle.idle_it_j == pytest.approx(8 * 90.0 * 5 * H)
    assert idle.idle_facility_kwh == pytest.approx(8 * 0.09 * 5)
    assert idle.idle_co2e_kg == pytest.approx(8 * 0.09 * 5 * 0.4)
    assert idle.reserved_gpu_hours == pytest.approx(120.0) and idle.idle_share == pytest.approx(40 / 120)
    assert idle.compute_cost == pytest.approx(120 * 2.0)
    assert idle.idle_cost == pytest.approx(40 * 2.0 + 8 * 0.09 * 5 * 0.1)
    assert idle.total_cost - base.total_cost == pytest.approx(idle.idle_cost)
    # no idle power known: the idle GPU-hours still cost, their energy is left out and said so
    unknown = footprint.run_footprint(8, 10 * H, 700.0, 1.0, 400.0, idle_s=5 * H, gpu_hour_price=2.0)
    assert not unknown.idle_power_known and unknown.idle_it_j == 0.0
    assert unknown.compute_cost == pytest.approx(120 * 2.0)


def test_embodied_emissions_amortise_a_server_and_its_gpus_over_their_lifetime():
    # BLOOM's estimate: 150 kg per A100 and 2,500 kg per 8-GPU server, 6 years at 85% use
    per_s = footprint.embodied_kg_per_gpu_s(150.0, 2500.0, 8, 6 * footprint.SECONDS_PER_YEAR, 0.85)
    assert per_s * H == pytest.approx((150 + 2500 / 8) / (6 * 8760 * 0.85))
    # the per-hour figures quoted from the paper: 0.056 kg per server-hour, 0.0034 per GPU-hour
    assert footprint.embodied_kg_per_gpu_s(0.0, 2500.0, 1, 6 * footprint.SECONDS_PER_YEAR, 0.85) * H == \
        pytest.approx(0.056, abs=5e-4)
    assert footprint.embodied_kg_per_gpu_s(150.0, 0.0, 1, 6 * footprint.SECONDS_PER_YEAR, 0.85) * H == \
        pytest.approx(0.0034, abs=5e-5)
    # a run holds its GPUs for its training and its idle hours: both carry embodied emissions
    f = footprint.run_footprint(384, 100 * H, 400.0, 1.2, 57.0, idle_s=20 * H, embodied_kg_per_gpu_s=per_s)
    assert f.embodied_co2e_kg == pytest.approx(per_s * 384 * 120 * H)
    assert f.total_co2e_kg == pytest.approx(f.operational_co2e_kg + f.embodied_co2e_kg)
    with pytest.raises(InputError, match="use_fraction"):
        footprint.embodied_kg_per_gpu_s(150.0, use_fraction=0.0)


# -- energy against time -----------------------------------------------------------------------
@pytest.mark.parametrize("eta", [0.0, 0.25, 0.5, 0.9, 1.0])
def test_the_zeus_optimum_is_the_best_cap_for_energy_and_time(eta):
    sweep = power.power_cap_sweep(700.0, 3000.0, compute_bound_share=0.5)
    curve = footprint.zeus_curve(sweep, 700.0, 1e12, 64, eta)
    assert curve.best_cap_w == power.best_of_sweep(sweep, "energy_time", 700.0, eta).cap_w
    k = 3
    energy = 1e12 * sweep.joules_per_token[k]
    time = 1e12 / (64 * sweep.tokens_per_s[k])
    assert curve.cost_j[k] == pytest.approx(eta * energy + (1 - eta) * 64 * 700.0 * time)
    assert curve.cost_j[k] == pytest.approx(curve.energy_term_j[k] + curve.time_term_j[k])
    assert curve.best_cost_j == pytest.approx(curve.cost_j.min())


def test_eta_moves_the_optimum_from_speed_to_energy():
    sweep = power.power_cap_sweep(700.0, 3000.0)
    assert footprint.zeus_curve(sweep, 700.0, 1e12, 8, 0.0).best_cap_w == 700.0  # time only: full speed
    energy_only = power.best_cap_for_efficiency(700.0, 3000.0).cap_w
    assert footprint.zeus_curve(sweep, 700.0, 1e12, 8, 1.0).best_cap_w == energy_only
    caps = [footprint.zeus_curve(sweep, 700.0, 1e12, 8, eta).best_cap_w for eta in np.linspace(0, 1, 11)]
    assert caps == sorted(caps, reverse=True)  # more weight on energy, a deeper cap


# -- capping part of a job ---------------------------------------------------------------------
def test_one_capped_gpu_of_eight_sets_the_pace_of_all():
    job = footprint.partial_cap(8, 1, 450.0, 700.0, 3000.0)
    capped = power.capped_performance(450.0, 700.0, 3000.0)
    assert job.stragglers and job.n_capped == 1
    assert job.job_tokens_per_s == pytest.approx(8 * capped.tokens_per_s)  # as if all eight were capped
    assert job.uncapped_job_tokens_per_s == pytest.approx(8 * 3000.0)
    assert job.busy_fraction == pytest.approx(capped.tokens_per_s / 3000.0)
    static = 0.3 * 700.0
    assert job.waiting_power_w == pytest.approx(static)
    assert job.uncapped_gpu_power_w == pytest.approx(700.0 * job.busy_fraction + static * job.wait_fraction)
    assert job.mean_gpu_power_w == pytest.approx((capped.power_w + 7 * job.uncapped_gpu_power_w) / 8)
    # the same speed as capping all eight, for more power: the worst of both
    everyone = footprint.partial_cap(8, None, 450.0, 700.0, 3000.0)
    assert not everyone.stragglers and everyone.job_tokens_per_s == pytest.approx(job.job_tokens_per_s)
    assert everyone.mean_gpu_power_w == pytest.approx(capped.power_w)
    assert everyone.mean_gpu_power_w < job.mean_gpu_power_w
    assert job.throughput_loss == pytest.approx(1 - capped.tokens_per_s / 3000.0)


def test_no_capped_gpu_or_a_cap_at_the_tdp_has_no_stragglers():
    none = footprint.partial_cap(8, 0, 450.0, 700.0, 3000.0)
    assert not none.stragglers and none.job_tokens_per_s == pytest.approx(24_000.0)
    assert none.mean_gpu_power_w == pytest.approx(700.0)
    at_tdp = footprint.partial_cap(8, 1, 700.0, 700.0, 3000.0)
    assert not at_tdp.stragglers and at_tdp.mean_gpu_power_w == pytest.approx(700.0)
    more = footprint.partial_cap(8, 20, 450.0, 700.0, 3000.0)  # more than the job has: all of them
    assert more.n_capped == 8 and not more.stragglers


# -- the cap as a command ----------------------------------------------------------------------
def test_the_cap_as_nvidia_smi_commands():
    node = footprint.cap_commands(450.0, 700.0)
    assert node.lines[0].startswith("sudo nvidia-smi -pl 450 ")
    assert "reboot" in node.note and "DCGM" in node.note
    one = footprint.cap_commands(450.0, 700.0, capped_gpus=1)
    assert one.lines[0].startswith("sudo nvidia-smi -i 0 -pl 450")
    three = footprint.cap_commands(437.5, 700.0, capped_gpus=3)
    assert three.lines[0].startswith("for i in 0 1 2; do sudo nvidia-smi -i $i -pl 437.50; done")
    nodes = footprint.cap_commands(450.0, 700.0, capped_gpus=17, gpus_per_node=8)
    assert "each of 2 nodes" in nodes.lines[0] and nodes.lines[1].startswith("sudo nvidia-smi -i 0 -pl 450")
    back = footprint.cap_commands(None, 700.0)
    assert back.lines[0].startswith("sudo nvidia-smi -pl 700") and "default" in back.lines[0]
    text = node.text()
    assert text.splitlines()[0] == node.lines[0] and all(line.startswith("# ") for line in text.splitlines()[1:])


# -- where ------------------------------------------------------------------------------------
def test_regions_change_the_co2e_of_the_same_energy_only():
    rows = footprint.compare_regions(77_000.0, [("pl", 759.62), ("fr", 51.28), ("custom", 400.0)], 1000.0)
    assert [r.key for r in rows] == ["fr", "custom", "pl"]
    assert rows[1].operational_co2e_kg == pytest.approx(30_800.0)
    assert rows[1].total_co2e_kg == pytest.approx(31_800.0)
    with pytest.raises(InputError, match="regions"):
        footprint.compare_regions(1.0, [("a",)])


# -- when -------------------------------------------------------------------------------------
def test_best_start_on_a_profile_with_a_midday_dip():
    run = footprint.best_start(PROFILE, 4 * H, facility_energy_kwh=1000.0)
    assert run.start_s == 10 * H  # 10:00-14:00: 180, 170, 160, 170
    assert run.best_g_per_kwh == pytest.approx(170.0)
    assert run.daily_mean_g_per_kwh == pytest.approx(np.mean(PROFILE))
    assert run.worst_start_s == 18 * H and run.worst_g_per_kwh == pytest.approx((450 + 480 + 470 + 460) / 4)
    assert run.best_co2e_kg == pytest.approx(170.0)
    assert run.saving_vs_mean_kg == pytest.approx(np.mean(PROFILE) - 170.0)
    assert run.hourly_window_g_per_kwh[10] == pytest.approx(170.0) and len(run.hourly_starts_s) == 24


def test_a_fractional_run_may_start_on_the_half_hour():
    dip = [100.0] * 24
    dip[12] = 0.0
    run = footprint.best_start(dip, 1.5 * H)
    assert run.start_s == pytest.approx(11.5 * H)  # the earliest start whose window holds the whole dip
    assert run.best_g_per_kwh == pytest.approx(100 * 0.5 / 1.5)


def test_a_run_longer_than_a_day_wraps_around_the_profile():
    six = footprint.best_start(PROFILE, 6 * H)
    long = footprint.best_start(PROFILE, 30 * H)
    assert long.start_s == six.start_s
    assert long.best_g_per_kwh == pytest.approx((sum(PROFILE) + 6 * six.best_g_per_kwh) / 30)
    flat = footprint.best_start(PROFILE, 48 * H, 10.0)
    assert flat.saving_vs_mean_kg == pytest.approx(0.0, abs=1e-9) and flat.start_s == 0.0


def test_typed_and_imported_profiles():
    assert footprint.parse_hourly_text(", ".join(map(str, PROFILE))) == tuple(map(float, PROFILE))
    assert footprint.parse_hourly_text("\n".join(map(str, PROFILE))) == tuple(map(float, PROFILE))
    with pytest.raises(InputError, match="24 hourly values"):
        footprint.parse_hourly_text("1 2 3")
    with pytest.raises(InputError, match="value 2"):
        footprint.parse_hourly_text("1 x " + " ".join(["1"] * 22))
    imported = footprint.parse_intensity_csv((FIXTURES / "hourly_intensity_two_days.csv").read_text())
    expected = list(map(float, PROFILE))
    expected[5] = 370 - 10  # only day 1 has 05:00
    assert imported.values == pytest.approx(expected)
    assert imported.rows == 47 and imported.skipped == 1
    assert imported.value_column == "carbon intensity (gCO2e/kWh)"
    assert imported.samples_per_hour[5] == 1 and imported.samples_per_hour[0] == 2


def test_csv_without_a_header_with_offsets_and_half_hours():
    rows = []
    for h in range(24):
        rows.append(f"2024-01-01T{h:02d}:00:00+01:00,{100 + h}")
        rows.append(f"2024-01-01T{h:02d}:30:00+01:00,{102 + h}")
    imported = footprint.parse_intensity_csv("\n".join(rows))
    assert imported.values[0] == pytest.approx(101.0) and imported.values[23] == pytest.approx(124.0)
    times = "\n".join(f"{h:02d}:00,{h}" for h in range(24))
    assert footprint.parse_intensity_csv("hour,g/kWh\n" + times).values[7] == 7.0


@pytest.mark.parametrize(("text", "message"), [
    ("", "no rows"),
    ("time,intensity\n2024-01-01T00:00,abc\n", "line 2"),
    ("time,intensity\nyesterday,100\n", "not a timestamp"),
    ("time,intensity\n2024-01-01T00:00,100\n", "no data for 23 hour"),
    ("time,intensity\n2024-01-01T00:00,-5\n", "between 0 and"),
])
def test_bad_csv_says_which_line_and_why(text, message):
    with pytest.raises(InputError, match=message):
        footprint.parse_intensity_csv(text)


def test_bad_inputs_name_the_parameter():
    with pytest.raises(InputError, match="hourly_g_per_kwh"):
        footprint.best_start([1.0] * 23, H)
    with pytest.raises(InputError, match="duration_s"):
        footprint.best_start(PROFILE, 0.0)
    with pytest.raises(InputError, match="capped_gpus"):
        footprint.partial_cap(8, -1, 450.0, 700.0, 3000.0)
    with pytest.raises(InputError, match="idle_power_w_per_gpu"):
        footprint.run_footprint(8, H, 700.0, 1.2, 400.0, idle_power_w_per_gpu=-1.0)
    with pytest.raises(InputError, match="pue"):
        footprint.run_footprint(8, H, 700.0, 0.9, 400.0)
    with pytest.raises(InputError, match="eta"):
        footprint.zeus_curve(power.power_cap_sweep(700.0, 3000.0), 700.0, 1e12, 8, 1.5)


# -- the sourced figures ----------------------------------------------------------------------
def test_the_bloom_preset_gives_the_papers_embodied_total():
    from presets.loader import load_embodied_figures

    (bloom,) = [f for f in load_embodied_figures() if f.key == "bloom-a100-apollo"]
    assert (bloom.gpu_g, bloom.server_g, bloom.gpus_per_server, bloom.use_fraction) == (150e3, 2500e3, 8, 0.85)
    assert bloom.lifetime_s == 6 * footprint.SECONDS_PER_YEAR
    assert "arXiv 2211.02001" in bloom.source and "6-year" in bloom.source
    per_s = footprint.embodied_kg_per_gpu_s(bloom.gpu_g / 1000, bloom.server_g / 1000, bloom.gpus_per_server,
                                            bloom.lifetime_s, bloom.use_fraction)
    # BLOOM's final training: 1,082,990 GPU-hours, 11.2 t embodied (7.57 t servers, 3.64 t GPUs)
    assert per_s * 1_082_990 * H == pytest.approx(11_200, rel=0.005)


def test_network_figures_carry_their_source_and_power_per_port():
    from presets.loader import load_network_figures

    figures = {f.key: f for f in load_network_figures()}
    assert figures["osfp-400g-nic-end"].per_port_w == 9.0
    assert figures["osfp-800g-switch-end"].per_port_w == 8.5
    assert all("docs.nvidia.com" in f.source for f in figures.values())


def test_a_bad_footprint_file_names_the_entry_and_field(tmp_path):
    from presets.loader import PresetError, load_embodied_figures, load_network_figures

    bad = tmp_path / "f.toml"
    bad.write_text('[embodied.x]\nname = "X"\ngpu_kg = 1\nserver_kg = 0\ngpus_per_server = 8\n'
                   'lifetime_years = 6\nuse_fraction = 1.5\nsource = "s"\n')
    with pytest.raises(PresetError, match="entry 'x': field 'use_fraction'"):
        load_embodied_figures(bad)
    bad.write_text('[network.y]\nname = "Y"\nwatts = 9\nports = 1\n')
    with pytest.raises(PresetError, match="field 'source'"):
        load_network_figures(bad)


def test_the_run_cost_at_the_current_cap_is_the_curves_at_that_cap():
    sweep = power.power_cap_sweep(700.0, 3000.0)
    curve = footprint.zeus_curve(sweep, 700.0, 1e12, 64, 0.3)
    k = 5
    at = power.capped_performance(float(sweep.cap_w[k]), 700.0, 3000.0)
    assert footprint.zeus_run_cost(at, 700.0, 1e12, 64, 0.3) == pytest.approx(curve.cost_j[k])
