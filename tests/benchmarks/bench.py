"""The speed benchmark (issue 15): one command, one table.

Run from the repository root::

    .venv/bin/python -m tests.benchmarks.bench            # 1.5 to 2 minutes on 2 cores
    .venv/bin/python -m tests.benchmarks.bench --json out.json --pairs 9 --samples 40

Every figure comes from a fresh child process (:mod:`tests.benchmarks._children`) on Qt's
offscreen platform with a 1920x1080 screen, a private HOME and data directory, and a
bytecode cache of its own (warmed by unmeasured runs first, as an installed app has its
``.pyc`` files; the session's PYTHONDONTWRITEBYTECODE would otherwise make every start
compile the app's sources). The driver itself imports no Qt.

- Start-up: whole processes to the first finished paint of the window, the app
  (``ui.cli.main``, the real entry point, on the default project) in rounds with a bare
  PySide6 + pyqtgraph window of the same size (the floor) in the same run, alternating the
  order; CPU time of the child at that paint (it includes the interpreter's own start), wall
  time from spawn, and peak memory (``ru_maxrss`` of the child from ``wait4``). The app is
  also measured to its first paint with the project in the window ("app, project shown").
- Change -> finished repaint: the change is made (an edit routed as its field routes it, the toolbar's Return,
  one animation step), then the event loop runs until no update request and no paint came
  for 60 ms; the figure ends where the last repaint returned. After each change the chart's
  pixels on screen are compared with the previous ones: "unchanged" counts changes whose
  pixels did not change (should be 0).
- Medians and 95th percentiles of wall time, and the median of the process's CPU time over
  the same spans (steadier when other work loads the machine; the load average is printed).
- The machine's own speed, before and after: a fixed loop of plain Python, timed (a VM's
  speed drifts; two tables are only compared when this probe agrees); and the same loop, ten
  times, in the child just before each change -> repaint figure ("probe just before" in its
  notes): the speed can change between the start of a run and the figure.

No figure is asserted: this prints, it never fails on speed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

from tests.benchmarks._stats import PROBE_ADDITIONS
from tests.benchmarks._stats import machine_probe as _machine_probe

REPO = Path(__file__).resolve().parents[2]
SCREEN = (1920, 1080)
CHILD = [sys.executable, "-m", "tests.benchmarks._children"]
N_SCENARIOS = 10_000

#: figure -> target, as issue 15 sets them
TARGETS = {
    "start-up CPU, app / bare window": "<= 1.3x",
    "peak memory at start, app": "bare window's",
    "roofline ceilings": "p95 < 16 ms",
    "collective size": "p95 < 16 ms",
    "all-reduce size": "p95 < 16 ms",
    "scaling serial fraction": "p95 < 16 ms",
    "power static share": "p95 < 16 ms",
    "toolbar GPU count": "p95 < 16 ms",
    "browser fill": "< 300 ms",
    "File > Open": "< 300 ms",
    "roofline 10k kernels": "p95 < 16 ms",
    "All-reduce PNG 3840 px": "< 500 ms",
}


def _environment(tmp: Path) -> dict[str, str]:
    screen = tmp / "screen.json"
    screen.write_text(json.dumps({"synchronousWindowSystemEvents": False, "windowFrameMargins": False,
                                  "screens": [{"name": "bench", "x": 0, "y": 0, "width": SCREEN[0],
                                               "height": SCREEN[1], "logicalDpi": 96,
                                               "logicalBaseDpi": 96, "dpr": 1}]}))
    home = tmp / "home"
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update({
        "QT_QPA_PLATFORM": f"offscreen:configfile={screen}",
        "PYQTGRAPH_QT_LIB": "PySide6",
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "XDG_RUNTIME_DIR": str(tmp / "runtime"),
        "SCALING_WORKBENCH_DATA_DIR": str(home / "data" / "scaling-workbench"),
        "PYTHONPYCACHEPREFIX": str(tmp / "pycache"),
        "PYTHONUNBUFFERED": "1",
    })
    (tmp / "runtime").mkdir(mode=0o700, exist_ok=True)
    return env


def _run(args: list[str], env: dict[str, str], timeout: float = 600.0) -> tuple[dict, float, float]:
    """Run one child; returns (its JSON, wall seconds from spawn to its report, its own peak MiB)."""
    start = time.monotonic()
    proc = subprocess.Popen(CHILD + args, cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise RuntimeError(f"{' '.join(args)}: timed out\n{err[-2000:]}") from None
    lines = [line for line in out.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"{' '.join(args)}: exit {proc.returncode}\n{err[-3000:]}")
    result = json.loads(lines[-1])
    wall = result["mono"] - start if "mono" in result else float("nan")
    return result, wall, result.get("self_maxrss_mib", float("nan"))


def _run_waited(args: list[str], env: dict[str, str], timeout: float = 120.0) -> tuple[dict, float, float]:
    """Like _run for the short start-up children, with the peak memory from wait4."""
    start = time.monotonic()
    read, write = os.pipe()
    proc = subprocess.Popen(CHILD + args, cwd=REPO, env=env, stdout=write, stderr=subprocess.DEVNULL)
    os.close(write)
    chunks = []
    deadline = time.monotonic() + timeout
    with os.fdopen(read, "rb") as pipe:
        for chunk in iter(lambda: pipe.read(65536), b""):
            chunks.append(chunk)
            if time.monotonic() > deadline:
                proc.kill()
                break
    _pid, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    text = b"".join(chunks).decode()
    lines = [line for line in text.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"{' '.join(args)}: exit {proc.returncode}: {text[-2000:]}")
    result = json.loads(lines[-1])
    return result, result["mono"] - start, usage.ru_maxrss / 1024


def _median(values):
    values = [v for v in values if v == v]
    return statistics.median(values) if values else float("nan")


def startup(env: dict[str, str], pairs: int, log) -> dict:
    # unmeasured: first start (creates the default project, saves the layout on close, fills the
    # bytecode cache), then one of each probe
    warm = dict(env, SCALING_WORKBENCH_QUIT_AFTER_START="0")
    subprocess.run(CHILD[:1] + ["-m", "ui.cli"], cwd=REPO, env=warm, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=180)
    first, _, _ = _run_waited(["app"], env)
    size = [str(v) for v in first["window"]]
    _run_waited(["bare", *size], env)
    runs: dict[str, list] = {"bare": [], "app": [], "app, project shown": []}
    kinds = [("bare", ["bare", *size]), ("app", ["app", "paint"]), ("app, project shown", ["app", "project"])]
    for i in range(pairs):
        order = kinds if i % 2 == 0 else kinds[::-1]
        for name, args in order:
            result, wall, peak = _run_waited(args, env)
            runs[name].append((result["cpu_s"], wall, peak))
        log(f"  start-up round {i + 1}/{pairs}: " + ", ".join(
            f"{name} {runs[name][-1][0] * 1e3:.0f} ms CPU" for name, _ in kinds))
    out = {"window": first["window"]}
    for name, values in runs.items():
        out[name] = {"cpu_ms": _median(v[0] for v in values) * 1e3, "wall_ms": _median(v[1] for v in values) * 1e3,
                     "peak_mib": _median(v[2] for v in values), "n": len(values),
                     "cpu_all_ms": [round(v[0] * 1e3) for v in values]}
    ratios = [a[0] / b[0] for a, b in zip(runs["app"], runs["bare"], strict=True)]
    out["ratio_paired_median"] = _median(ratios)
    out["ratio_project_paired_median"] = _median(
        a[0] / b[0] for a, b in zip(runs["app, project shown"], runs["bare"], strict=True))
    return out


def _versions() -> str:
    names = ("PySide6-Essentials", "pyqtgraph", "numpy", "SQLAlchemy")
    found = []
    for name in names:
        try:
            found.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            pass
    return ", ".join(found)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _row(name: str, median, p95, cpu, n, note: str = "") -> str:
    def ms(value):
        return "" if value is None or value != value else f"{value:,.1f} ms"
    return f"| {name} | {ms(median)} | {ms(p95)} | {ms(cpu)} | {n} | {TARGETS.get(name, '')} | {note} |"


def table(results: dict) -> str:
    lines = ["| figure | median | p95 | CPU median | n | target | notes |", "|---|---|---|---|---|---|---|"]
    s = results.get("startup")
    if s:
        w, h = s["window"]
        bare, app, shown = s["bare"], s["app"], s["app, project shown"]
        lines.append(f"| start-up CPU, app / bare window | {app['cpu_ms'] / bare['cpu_ms']:.2f}x "
                     f"(paired {s['ratio_paired_median']:.2f}x) | | | {app['n']} pairs | "
                     f"{TARGETS['start-up CPU, app / bare window']} | app {app['cpu_ms']:.0f} ms CPU "
                     f"({app['wall_ms']:.0f} ms wall), bare {bare['cpu_ms']:.0f} ms CPU "
                     f"({bare['wall_ms']:.0f} ms wall); window {w}x{h} |")
        lines.append(f"| start-up CPU, app with the project shown / bare | {shown['cpu_ms'] / bare['cpu_ms']:.2f}x "
                     f"(paired {s['ratio_project_paired_median']:.2f}x) | | | {shown['n']} pairs | | "
                     f"{shown['cpu_ms']:.0f} ms CPU ({shown['wall_ms']:.0f} ms wall) to the first paint "
                     "with the project in the window |")
        lines.append(f"| peak memory at start, app | {app['peak_mib']:.0f} MiB | | | {app['n']} | "
                     f"{TARGETS['peak memory at start, app']} | bare window {bare['peak_mib']:.0f} MiB; "
                     f"with the project shown {shown['peak_mib']:.0f} MiB |")
    for group in ("window", "browser", "roofline"):
        for name, r in results.get(group, {}).items():
            if not isinstance(r, dict):
                continue
            notes = []
            if r.get("unpainted"):
                notes.append(f"{r['unpainted']} changes painted nothing")
            if "pixels_unchanged" in r:
                notes.append(f"pixels unchanged after {r['pixels_unchanged']} of {r['n']}")
            if "rows" in r:
                notes.append(f"{r['rows']:,} rows")
            if "import_ms" in r:
                notes.append(f"import + first draw {r['import_ms']:.0f} ms")
            if "steps" in r:
                notes.append(f"{r['steps']} steps")
            if "chart" in r:
                notes.append("chart {}x{}".format(*r["chart"]))
            if "probe" in r:
                notes.append("probe just before {median_ms} / {p95_ms} ms".format(**r["probe"]))
            lines.append(_row(name, r.get("median"), r.get("p95"), r.get("cpu_median"), r.get("n"),
                              "; ".join(notes)))
    return "\n".join(lines)


PROBE_RUNS = 30


def machine_probe() -> dict[str, float]:
    """The machine's speed before and after the run (see ``_stats.machine_probe``): this kind
    of machine (a VM with 2 cores) runs the same code up to twice as slowly in some spells, so
    each table says what the same fixed work cost while it was taken."""
    return _machine_probe(PROBE_RUNS)


def _probe_text(probe: dict[str, float]) -> str:
    return f"{probe['median_ms']} / {probe['p95_ms']} ms"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.bench", description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=7, help="start-up rounds (bare, app, app with project)")
    parser.add_argument("--samples", type=int, default=30, help="changes timed per figure")
    parser.add_argument("--only", choices=("startup", "window", "browser", "roofline"), action="append",
                        help="run only these parts (repeatable)")
    parser.add_argument("--json", type=Path, help="also write the raw figures here")
    args = parser.parse_args(argv)
    parts = args.only or ["startup", "window", "browser", "roofline"]

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    results: dict = {"machine": {
        "cpu": _cpu_model(), "cores": os.cpu_count(), "python": platform.python_version(),
        "versions": _versions(), "load_before": [round(v, 2) for v in os.getloadavg()],
        "probe_before": machine_probe(),
    }}
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="swb-bench-") as name:
        tmp = Path(name)
        env = _environment(tmp)
        if "startup" in parts:
            log("start-up ...")
            results["startup"] = startup(env, args.pairs, log)
        if "window" in parts:
            log("main window: panels, toolbar, animation, export ...")
            results["window"], _, _ = _run(["window", str(tmp), str(args.samples)], env)
        if "browser" in parts:
            log(f"building a project of {N_SCENARIOS:,} scenarios ...")
            big, small = tmp / "big.swbproj", tmp / "small.swbproj"
            built, _, _ = _run(["build", str(big), str(N_SCENARIOS)], env)
            _run(["build", str(small), "5"], env)
            log(f"  built in {built['build_s']:.1f} s; browser and File > Open ...")
            results["browser"], _, _ = _run(["browser", str(big), str(small), str(max(3, args.samples // 6))], env)
        if "roofline" in parts:
            log("roofline with 10,000 kernels ...")
            results["roofline"], _, _ = _run(["roofline", str(tmp), str(args.samples)], env)
    machine = results["machine"]
    machine["load_after"] = [round(v, 2) for v in os.getloadavg()]
    machine["seconds"] = round(time.monotonic() - began)
    machine["probe_after"] = machine_probe()
    print(f"\nScaling Workbench benchmark, {time.strftime('%Y-%m-%d %H:%M')}; {machine['cpu']}, "
          f"{machine['cores']} cores; Python {machine['python']}, {machine['versions']}; offscreen "
          f"{SCREEN[0]}x{SCREEN[1]}; load average {machine['load_before'][0]:.2f} before, "
          f"{machine['load_after'][0]:.2f} after; machine probe ({PROBE_RUNS} x {PROBE_ADDITIONS:,} Python additions, "
          f"median / p95) {_probe_text(machine['probe_before'])} before, {_probe_text(machine['probe_after'])} after; "
          f"{machine['seconds']} s\n")
    print(table(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
