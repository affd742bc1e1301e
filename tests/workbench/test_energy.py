"""Energy-log parsing (workbench.energy) on the project's own fixtures.

tests/fixtures/energy holds CodeCarbon files of three schema generations, nvidia-smi queries
with and without units (and without timestamps), and plain power samples, all with made-up
numbers chosen so that the trapezoid sums can be done by hand (the working is in each test).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench._validate import InputError
from workbench.energy import (
    FORMATS,
    J_PER_KWH,
    EnergyLog,
    EnergyLogError,
    parse_energy_log,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "energy"
EXACT = 1e-12


def load(name: str) -> EnergyLog:
    return parse_energy_log((FIXTURES / name).read_text(encoding="utf-8"))


def skipped_at(log: EnergyLog) -> dict[int, str]:
    return {n.line: n.reason for n in log.skipped}


# -- CodeCarbon --------------------------------------------------------------------------
def test_codecarbon_oldest_schema():
    log = load("codecarbon_v1.csv")
    assert log.format == "codecarbon"
    first, second = log.runs
    assert first.line == 2 and first.project_name == "bert-pretrain"
    assert first.duration_s == 3600.0
    assert first.energy_j == pytest.approx(2.0 * 3.6e6, rel=EXACT)  # 2 kWh
    assert first.emissions_kg == 0.5
    assert first.avg_power_w == pytest.approx(2000.0, rel=EXACT)
    assert first.on_cloud is False
    assert first.cloud_provider is None and first.cloud_region is None  # empty fields
    assert first.run_id is None and first.gpu_energy_j is None  # no such columns
    # totals: 3 kWh over 5400 s
    assert log.energy_j == pytest.approx(3.0 * J_PER_KWH, rel=EXACT)
    assert log.duration_s == 5400.0
    assert log.avg_power_w == pytest.approx(2000.0, rel=EXACT)
    assert log.emissions_kg == pytest.approx(0.75, rel=EXACT)
    assert (log.country_name, log.country_iso_code, log.region) == ("France", "FRA", "Île-de-France")
    assert log.peak_power_w is None  # CodeCarbon does not record it


def test_codecarbon_v2_schema_with_component_energies():
    (run,) = load("codecarbon_v2_0.csv").runs
    assert run.run_id == "7d1c52bb-2d7e-4d4e-9a4d-2b7a3a0b2f11"
    assert run.gpu_power_w == 250.0 and run.cpu_power_w == 42.5 and run.ram_power_w == 11.75
    assert run.gpu_energy_j == pytest.approx(0.0625 * 3.6e6, rel=EXACT)  # 250 W x 900 s
    assert run.energy_j == pytest.approx(0.0760625 * 3.6e6, rel=EXACT)
    assert run.emissions_rate_kg_per_s == pytest.approx(3.3333e-05, rel=EXACT)
    assert (run.cpu_count, run.gpu_count, run.gpu_model) == (16, 1, "1 x NVIDIA A40")
    assert (run.longitude, run.latitude) == (-73.5673, 45.5017)
    assert run.experiment_id is None and run.pue is None and run.codecarbon_version is None


def test_codecarbon_current_schema_checkpoints_and_bad_rows():
    log = load("codecarbon_v2_8.csv")
    assert [r.line for r in log.runs] == [2, 3, 4, 5]
    first = log.runs[0]
    assert first.cpu_model == "Intel(R) Xeon(R) Platinum 8275CL CPU @ 3.00GHz, 48 cores"  # quoted comma
    assert (first.codecarbon_version, first.pue, first.on_cloud) == ("2.8.0", 1.0, True)
    assert first.experiment_id == "5b0fa12a-3dd7-45bb-9766-cc326314d9f1"
    assert (first.cloud_provider, first.cloud_region, first.tracking_mode) == ("aws", "us-east-1", "machine")
    empty = log.runs[3]
    assert empty.gpu_power_w is None and empty.gpu_energy_j is None and empty.gpu_count is None
    assert empty.energy_j == pytest.approx(0.125 * 3.6e6, rel=EXACT)
    # Rows 2 and 3 are checkpoints of one run (running totals): the longer counts.
    # 1.0 + 0.25 + 0.125 kWh over 1200 + 300 + 150 s
    assert log.energy_j == pytest.approx(1.375 * 3.6e6, rel=EXACT)
    assert log.duration_s == pytest.approx(1650.0, rel=EXACT)
    assert log.avg_power_w == pytest.approx(3000.0, rel=EXACT)
    assert log.emissions_kg == pytest.approx(0.275, rel=EXACT)
    assert any("run_id" in note for note in log.notes)
    assert log.region == "virginia" and log.country_iso_code == "USA"
    assert skipped_at(log) == {6: "has 6 fields, the header has 32", 7: "energy_consumed 'abc' is not a number"}


def test_codecarbon_runs_from_different_regions_have_no_common_region():
    text = (
        "timestamp,project_name,duration,emissions,energy_consumed,country_name,country_iso_code,region,"
        "on_cloud,cloud_provider,cloud_region\n"
        "2021-01-01T00:00:00,a,10,0.001,0.01,France,FRA,,N,,\n"
        "2021-01-02T00:00:00,a,10,0.002,0.01,Germany,DEU,,N,,\n"
    )
    log = parse_energy_log(text)
    assert log.country_name is None and log.country_iso_code is None and log.region is None
    assert any("country_name" in note for note in log.notes)
    assert log.emissions_kg == pytest.approx(0.003, rel=EXACT)


def test_codecarbon_appended_with_a_newer_header_reads_both_parts():
    old = (FIXTURES / "codecarbon_v1.csv").read_text().splitlines()
    new = (FIXTURES / "codecarbon_v2_0.csv").read_text().splitlines()
    log = parse_energy_log("\n".join(old + new))
    assert len(log.runs) == 3
    assert log.runs[2].gpu_power_w == 250.0
    assert skipped_at(log)[4] == "header (new columns)"


def test_codecarbon_header_only_raises():
    with pytest.raises(EnergyLogError) as info:
        parse_energy_log("# emissions\ntimestamp,project_name,duration,emissions,energy_consumed\n")
    assert info.value.line == 2


# -- nvidia-smi --------------------------------------------------------------------------
def test_nvidia_smi_with_units_two_gpus_na_and_repeated_header():
    log = load("nvidia_smi_units.csv")
    assert log.format == "nvidia-smi"
    gpu0, gpu1 = log.gpus
    assert (gpu0.gpu, gpu0.name, gpu0.samples) == ("0", "NVIDIA H100 80GB HBM3", 4)
    # GPU 0 at t = 0, 1, 2, 3 s: 300, 500, 700, 400 W
    # (300+500)/2 + (500+700)/2 + (700+400)/2 = 400 + 600 + 550 = 1550 J
    assert gpu0.energy_j == pytest.approx(1550.0, rel=EXACT)
    assert gpu0.duration_s == pytest.approx(3.0, rel=EXACT)
    assert gpu0.avg_power_w == pytest.approx(1550.0 / 3.0, rel=EXACT)
    assert gpu0.peak_power_w == 700.0
    # GPU 1 lost its 1 s reading ([N/A]): t = 0.002, 2.002, 3.002 s: 310, 690, 410 W
    # (310+690)/2 x 2 + (690+410)/2 x 1 = 1000 + 550 = 1550 J
    assert gpu1.samples == 3
    assert gpu1.energy_j == pytest.approx(1550.0, rel=EXACT)
    assert gpu1.duration_s == pytest.approx(3.0, rel=EXACT)
    assert log.energy_j == pytest.approx(3100.0, rel=EXACT)
    assert log.duration_s == pytest.approx(3.002, rel=EXACT)  # first to last sample of any GPU
    assert log.avg_power_w == pytest.approx(3100.0 / 3.002, rel=EXACT)
    # rounds: 300+310, 500, 700+690, 400+410
    assert log.peak_power_w == 1390.0
    assert log.start_time == "2024/05/01 10:00:00.000"
    assert [s.time_s for s in log.samples][:3] == pytest.approx([0.0, 0.002, 1.0], abs=1e-12)
    assert skipped_at(log) == {5: "power.draw is [N/A]", 6: "repeated header"}


def test_nvidia_smi_nounits_not_supported_and_bad_rows():
    log = load("nvidia_smi_nounits.csv")
    (gpu,) = log.gpus
    # t = 0, 1, 3 s: 250.5, 260.5, 300 W -> (250.5+260.5)/2 x 1 + (260.5+300)/2 x 2 = 255.5 + 560.5
    assert gpu.energy_j == pytest.approx(816.0, rel=EXACT)
    assert gpu.duration_s == pytest.approx(3.0, rel=EXACT)
    assert gpu.avg_power_w == pytest.approx(272.0, rel=EXACT)
    assert gpu.peak_power_w == 300.0
    skipped = skipped_at(log)
    assert skipped[3] == "power.draw is [Not Supported]"
    assert skipped[5] == "has 4 fields, the header has 5"
    assert "not a valid date" in skipped[6]  # hour 25


def test_nvidia_smi_without_timestamps_gives_average_and_peak_only():
    log = load("nvidia_smi_no_timestamp.csv")
    assert log.energy_j is None and log.duration_s is None
    assert [g.energy_j for g in log.gpus] == [None, None]
    assert [g.avg_power_w for g in log.gpus] == [125.0, 225.0]
    assert log.avg_power_w == 350.0  # both GPUs together
    assert log.peak_power_w == 400.0  # 150 + 250 in the second round
    assert any("no timestamps" in note for note in log.notes)


# -- plain samples -----------------------------------------------------------------------
def test_plain_iso_samples_with_header_and_comment():
    log = load("power_iso.csv")
    assert log.format == "power-samples"
    (gpu,) = log.gpus
    assert gpu.gpu is None
    # (1000+1200)/2 x 10 + (1200+1100)/2 x 10 + (1100+900)/2 x 20 = 11000 + 11500 + 20000
    assert log.energy_j == pytest.approx(42_500.0, rel=EXACT)
    assert log.duration_s == pytest.approx(40.0, rel=EXACT)
    assert log.avg_power_w == pytest.approx(1062.5, rel=EXACT)
    assert log.peak_power_w == 1200.0
    assert skipped_at(log) == {6: "power_w is N/A"}


def test_plain_epoch_seconds_whitespace_no_header():
    log = load("power_epoch.txt")
    # 0.5 s at (200+300)/2, 1 s at (300+250)/2, 0.5 s at (250+250)/2 = 125 + 275 + 125
    assert log.energy_j == pytest.approx(525.0, rel=EXACT)
    assert log.duration_s == pytest.approx(2.0, rel=EXACT)
    assert log.samples[0].time_s == 1714557600.0
    assert log.samples[-1].power_w == 250.0  # "250 W"
    assert skipped_at(log) == {5: "has 3 fields, the first sample has 2"}


def test_plain_per_gpu_column_milliseconds_and_semicolons():
    log = load("power_gpus.csv")
    gpu0, gpu1 = log.gpus
    # GPU 0: (100+300)/2 x 0.5 + (300+100)/2 x 1 = 100 + 200; GPU 1: 150 + 300
    assert (gpu0.energy_j, gpu1.energy_j) == (pytest.approx(300.0, rel=EXACT), pytest.approx(450.0, rel=EXACT))
    assert log.energy_j == pytest.approx(750.0, rel=EXACT)
    assert log.duration_s == pytest.approx(1.5, rel=EXACT)
    assert log.avg_power_w == pytest.approx(500.0, rel=EXACT)
    assert log.peak_power_w == 700.0  # 300 + 400 W at 0.5 s


def test_plain_whitespace_dates_split_in_two_tokens_and_gpu_column():
    text = "2024-05-01 10:00:00 0 100\n2024-05-01 10:00:00 1 300\n2024-05-01 10:00:04 0 200\n2024-05-01 10:00:04 1 100\n"
    log = parse_energy_log(text)
    assert [g.gpu for g in log.gpus] == ["0", "1"]
    assert [g.energy_j for g in log.gpus] == [600.0, 800.0]  # 150 W x 4 s, 200 W x 4 s
    assert log.peak_power_w == 400.0


def test_unordered_samples_are_integrated_in_time_order():
    log = parse_energy_log("t,power_w\n2,100\n0,100\n1,300\n")
    # sorted: 0 s 100 W, 1 s 300 W, 2 s 100 W -> 200 + 200
    assert log.energy_j == pytest.approx(400.0, rel=EXACT)


def test_gaps_are_noted():
    rows = "\n".join(f"{t},100" for t in (0, 1, 2, 3, 4, 100))
    log = parse_energy_log("time_s,power_w\n" + rows)
    assert log.energy_j == pytest.approx(100.0 * 100, rel=EXACT)
    assert any("between lines 6 and 7" in note for note in log.notes)


def test_single_sample_has_no_energy():
    log = parse_energy_log("timestamp,power_w\n2024-05-01T10:00:00,250\n")
    assert log.energy_j is None and log.duration_s == 0.0
    assert log.avg_power_w == 250.0 and log.peak_power_w == 250.0
    assert any("single sample" in note for note in log.notes)


def test_mixed_timestamp_kinds_are_skipped():
    log = parse_energy_log("time,power\n2024-05-01T10:00:00,100\n5,100\n2024-05-01T10:00:10,100\n")
    assert skipped_at(log) == {3: "timestamp mixes dates and plain numbers; the first sample set the kind"}
    assert log.energy_j == pytest.approx(1000.0, rel=EXACT)


def test_power_units_in_header():
    log = parse_energy_log("time_s,power_kw\n0,1.5\n2,2.5\n")
    assert log.energy_j == pytest.approx(4000.0, rel=EXACT)  # (1500+2500)/2 x 2


# -- errors ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, line",
    [
        ("", 1),
        ("\n# only a comment\n\n", 1),
        ("hello world\n", 1),
        ("\n\nname,value\nx,1\n", 3),
        ("iter 10: loss 3.2, time 12ms, mfu 30%\n", 1),
        ("1 2 3 4\n", 1),
        ("timestamp,power_w\n2024-05-01T10:00:00,abc\n", 2),
        ("index, power.draw [W]\n0, [N/A]\n", 2),
    ],
)
def test_not_an_energy_log_raises_with_a_line_number(text, line):
    with pytest.raises(EnergyLogError) as info:
        parse_energy_log(text)
    assert info.value.line == line
    assert isinstance(info.value, InputError) and isinstance(info.value, ValueError)


@pytest.mark.parametrize("bad", [b"timestamp,power_w\n", None, 3.5])
def test_non_text_raises_the_module_error(bad):
    with pytest.raises(EnergyLogError) as info:
        parse_energy_log(bad)
    assert info.value.line == 1


def test_out_of_range_values_are_skipped_not_stored():
    log = parse_energy_log("time_s,power_w\n0,100\n1,1e400\n2,-5\n3,nan\n4,100\n")
    assert [s.power_w for s in log.samples] == [100.0, 100.0]
    assert set(skipped_at(log)) == {3, 4, 5}


def test_every_fixture_has_a_known_format():
    assert {load(p.name).format for p in FIXTURES.iterdir()} == set(FORMATS)


# -- properties --------------------------------------------------------------------------
def _finite_or_none(value) -> bool:
    return value is None or (isinstance(value, float) and math.isfinite(value))


def _check(log: EnergyLog) -> None:
    for name in ("energy_j", "duration_s", "avg_power_w", "peak_power_w", "emissions_kg"):
        assert _finite_or_none(getattr(log, name)), name
    for run in log.runs:
        for name in ("duration_s", "emissions_kg", "energy_j", "gpu_energy_j", "gpu_power_w", "pue"):
            assert _finite_or_none(getattr(run, name)), name
        assert _finite_or_none(run.avg_power_w)
    for gpu in log.gpus:
        assert _finite_or_none(gpu.energy_j) and _finite_or_none(gpu.duration_s)
        assert math.isfinite(gpu.avg_power_w) and math.isfinite(gpu.peak_power_w)
        assert gpu.energy_j is None or gpu.energy_j >= 0
    for sample in log.samples:
        assert math.isfinite(sample.power_w) and sample.power_w >= 0
        assert _finite_or_none(sample.time_s)
    assert all(n.line >= 1 for n in log.skipped)


def _parses_or_raises(text: str) -> None:
    try:
        log = parse_energy_log(text)
    except EnergyLogError as exc:
        assert exc.line >= 1
        return
    _check(log)


_HEADERS = [
    "timestamp,project_name,run_id,duration,emissions,energy_consumed,gpu_power,gpu_count,on_cloud,pue",
    "timestamp, index, name, power.draw [W]",
    "timestamp, index, power.draw",
    "index, power.draw [W]",
    "timestamp,power_w",
    "time_ms;gpu;power (W)",
    "",
]
_CELLS = st.one_of(
    st.integers(-5, 10**6).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["", "[N/A]", "N/A", "[Not Supported]", "Y", "N", "312.5 W", "1e308", "1e-310",
                     "2024/05/01 10:00:00.123", "2024-05-01T10:00:00Z", "2024-13-45T99:00:00", "9" * 400,
                     "1714557600.25", '"a, b"', '"', "nan", "-inf", "0"]),
    st.text(max_size=5),
)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(_HEADERS), st.lists(st.lists(_CELLS, min_size=1, max_size=10), max_size=8),
       st.sampled_from([",", ";", " ", ", "]))
def test_table_like_text_parses_or_raises_the_module_error(header, rows, sep):
    _parses_or_raises("\n".join([header, *(sep.join(r) for r in rows)]))


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_any_text_parses_or_raises_the_module_error(text):
    _parses_or_raises(text)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(sorted(p.name for p in FIXTURES.iterdir())), st.data())
def test_mangled_fixtures_parse_or_raise(name, data):
    lines = (FIXTURES / name).read_text(encoding="utf-8").splitlines()
    body = data.draw(st.lists(st.sampled_from(lines[1:] or lines), max_size=10))
    noise = data.draw(st.lists(_CELLS, max_size=4))
    _parses_or_raises("\n".join([lines[0], *body, *noise]))


def test_nvidia_smi_without_header_takes_the_first_watts_column():
    log = load("nvidia_smi_noheader.csv")
    assert log.format == "nvidia-smi"
    gpu0, gpu1 = log.gpus
    assert (gpu0.gpu, gpu1.gpu) == ("0", "1")
    # GPU 0: (60+70)/2 x 5 = 325 J; GPU 1 lost its 5 s reading: (40+50)/2 x 10 = 450 J
    assert gpu0.energy_j == pytest.approx(325.0, rel=EXACT)
    assert gpu1.energy_j == pytest.approx(450.0, rel=EXACT)
    assert gpu0.peak_power_w == 70.0  # not the 72 W limit in the last column
    assert log.duration_s == pytest.approx(10.001, rel=EXACT)
    assert skipped_at(log) == {4: "power is [N/A]"}


def test_skipped_reasons_group_rows_that_fail_the_same_way():
    log = parse_energy_log("time_s,power_w\n0,100\n1,abc\n2,xyz\n3,N/A\n4,100\n5,1,2\n")
    assert log.skipped_reasons() == {
        "power_w '...' is not a number": 2,
        "power_w is N/A": 1,
        "has N fields, the header has N": 1,
    }
