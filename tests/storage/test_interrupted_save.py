"""A save killed with SIGKILL leaves either the old or the new project, never a broken one.

A child process opens a project, adds a scenario and saves, in a loop. It reports on stdout
where it is; at a chosen stage it stops and waits on stdin, so the parent kills it exactly
there (no sleeps: the parent blocks on the child's output, bounded by a watchdog).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from storage import Project

ROOT = Path(__file__).resolve().parents[2]
WATCHDOG_SECONDS = 120

CHILD = r"""
import sqlite3, sys
from storage import Project, fileio
from workbench.scenarios import PowerScenario

path, stage, pause_at = sys.argv[1], sys.argv[2], int(sys.argv[3])
state = {"i": -1}

def pause(label):
    if state["i"] == pause_at:
        print(label, flush=True)
        sys.stdin.readline()  # killed while waiting here
        raise SystemExit("not killed")

real_copy, real_fsync, real_fsync_dir = fileio.copy_database, fileio.fsync_file, fileio.fsync_dir

def copy_database(source, dest):
    if stage != "mid-copy":
        real_copy(source, dest)
        if stage == "copied":
            pause("STAGE copied")
        return
    conn = sqlite3.connect(dest, isolation_level=None)
    conn.execute("PRAGMA journal_mode=OFF")
    def progress(status, remaining, total):
        if total - remaining >= 2:
            pause("STAGE mid-copy")
    try:
        source.backup(conn, pages=1, progress=progress)
    finally:
        conn.close()

def fsync_file(p):
    real_fsync(p)
    if stage == "fsynced":
        pause("STAGE fsynced")

def fsync_dir(p):
    if stage == "replaced":
        pause("STAGE replaced")
    real_fsync_dir(p)

fileio.copy_database, fileio.fsync_file, fileio.fsync_dir = copy_database, fsync_file, fsync_dir

project = Project.open(path)
# Enough content that the database spans many pages.
for k in range(40):
    project.save_scenario(f"filler {k}", PowerScenario(), notes="x" * 2000)
project.save()
print("READY", flush=True)
i = 0
while True:
    state["i"] = i
    project.save_scenario(f"run {i}", PowerScenario())
    print(f"saving {i}", flush=True)
    project.save()
    print(f"saved {i}", flush=True)
    i += 1
"""


def _run_and_kill(path: Path, stage: str, pause_at: int, kill_on: str) -> list[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), stage, str(pause_at)],
        cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    watchdog = threading.Timer(WATCHDOG_SECONDS, proc.kill)
    watchdog.start()
    lines: list[str] = []
    try:
        for _ in range(10_000):
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line.strip())
            if lines[-1] == kill_on:
                proc.send_signal(signal.SIGKILL)
                break
        proc.wait()
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stdin.close()
        stderr = proc.stderr.read()
        proc.stderr.close()
    assert lines and lines[-1] == kill_on, f"child ended early: {lines[-5:]} {stderr}"
    assert proc.returncode == -signal.SIGKILL
    return lines


def _runs(path: Path) -> list[int]:
    with Project.open(path) as project:
        assert project.problems == []
        names = [r.name for r in project.list_scenarios("power")]
    assert sum(n.startswith("filler") for n in names) == 40
    return sorted(int(n.split()[1]) for n in names if n.startswith("run "))


def _assert_folder_clean(path: Path) -> None:
    projects = [p.name for p in path.parent.iterdir() if p.name.endswith(".swbproj")]
    assert projects == [path.name]
    for other in path.parent.iterdir():
        assert other == path or ".tmp-" in other.name, other
    assert Project.recovery_for(path) is None


@pytest.mark.parametrize(
    ("stage", "saved"),
    [
        ("mid-copy", "old"),  # the temporary file is half written
        ("copied", "old"),  # complete but not yet fsynced
        ("fsynced", "old"),  # durable but not yet renamed
        ("replaced", "new"),  # renamed, folder not yet fsynced
    ],
)
def test_kill_at_each_stage_of_a_save(project_path, stage, saved):
    pause_at = 2
    _run_and_kill(project_path, stage, pause_at, f"STAGE {stage}")
    expected = list(range(pause_at)) if saved == "old" else list(range(pause_at + 1))
    assert _runs(project_path) == expected
    _assert_folder_clean(project_path)


@pytest.mark.parametrize("kill_after", [0, 3, 7, 12])
def test_kill_at_arbitrary_points_of_a_save_loop(project_path, kill_after):
    lines = _run_and_kill(project_path, "free", -1, f"saving {kill_after}")
    assert "READY" in lines
    runs = _runs(project_path)
    # Whatever the moment, the file holds a complete save: runs 0..m without gaps.
    assert runs == list(range(len(runs)))
    assert len(runs) >= kill_after
    _assert_folder_clean(project_path)
    # And the project saves normally afterwards.
    with Project.open(project_path) as project:
        project.set_notes(project.list_scenarios()[0].id, "after the crash")
        project.save()
    _runs(project_path)


# A driver process imports once, then for each trial forks a writer that saves in a loop
# and SIGKILLs itself at a point drawn from the trial's seeded RNG: after any page of the
# temporary copy, or just before or after the fsync, the rename or the folder fsync. The
# writer reports each save that returned (through a pipe, unbuffered) before the next one
# starts; after the kill the driver opens the project and prints what it holds. No sleeps:
# each kill point is an event count.
RANDOM_KILLS = r"""
import json, os, random, signal, sys
from storage import Project, fileio
from workbench.scenarios import PowerScenario

path, seed, trials = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)
with Project.open(path) as project:
    for k in range(40):
        project.save_scenario(f"filler {k}", PowerScenario(), notes="x" * 2000)
    project.save()

def writer(target, report):
    events = [0]
    def event():
        events[0] += 1
        if events[0] == target:
            os.kill(os.getpid(), signal.SIGKILL)
    real_fsync, real_fsync_dir, real_replace = fileio.fsync_file, fileio.fsync_dir, os.replace
    def copy_database(source, dest):
        import sqlite3
        conn = sqlite3.connect(dest, isolation_level=None)
        conn.execute("PRAGMA journal_mode=OFF")
        try:
            source.backup(conn, pages=1, progress=lambda *a: event())
        finally:
            conn.close()
    def fsync_file(p):
        event(); real_fsync(p); event()
    def fsync_dir(p):
        event(); real_fsync_dir(p); event()
    def replace(a, b):
        event(); real_replace(a, b); event()
    fileio.copy_database, fileio.fsync_file, fileio.fsync_dir = copy_database, fsync_file, fsync_dir
    fileio.os.replace = replace
    project = Project.open(path)
    first = 1 + max([int(n.name.split()[1]) for n in project.list_scenarios("power") if n.name.startswith("run ")],
                    default=-1)
    for i in range(first, first + 30):
        project.save_scenario(f"run {i}", PowerScenario())
        project.save()
        os.write(report, f"{i}\n".encode())
    os._exit(0)

for trial in range(trials):
    target = rng.randint(1, 400)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        try:
            writer(target, write_end)
        finally:
            os._exit(3)
    os.close(write_end)
    reported = []
    with os.fdopen(read_end) as pipe:
        reported = [int(line) for line in pipe]
    _, status = os.waitpid(pid, 0)
    killed = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    result = {"trial": trial, "target": target, "killed": killed,
              "exit": os.waitstatus_to_exitcode(status), "reported": reported}
    try:
        with Project.open(path) as project:
            result["problems"] = project.problems
            result["runs"] = sorted(int(r.name.split()[1]) for r in project.list_scenarios("power")
                                    if r.name.startswith("run "))
            result["fillers"] = sum(r.name.startswith("filler") for r in project.list_scenarios("power"))
    except Exception as exc:
        result["error"] = f"{type(exc).__name__}: {exc}"
    result["folder"] = sorted(os.listdir(os.path.dirname(path)))
    print(json.dumps(result), flush=True)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the random-kill driver forks its writers")
def test_random_kills_during_saves_always_leave_the_old_or_the_new_project(project_path):
    import json
    import random

    seed = random.Random(14).randrange(2**32)  # fixed: a failure can be replayed
    trials = 16
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    result = subprocess.run([sys.executable, "-c", RANDOM_KILLS, str(project_path), str(seed), str(trials)],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=WATCHDOG_SECONDS)
    assert result.returncode == 0, result.stderr
    outcomes = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(outcomes) == trials
    previous: list[int] = []
    for outcome in outcomes:
        assert "error" not in outcome, outcome
        assert outcome["problems"] == [] and outcome["fillers"] == 40, outcome
        runs = outcome["runs"]
        # A complete save, never part of one: runs 0..m without gaps, ...
        assert runs == list(range(len(runs))), outcome
        # ... holding every save that returned, and at most the one that was cut short.
        reported = outcome["reported"]
        assert set(reported) <= set(runs), outcome
        assert len(runs) <= len(previous) + len(reported) + 1, outcome
        # Nothing else is left beside it than temporary files of our naming.
        for name in outcome["folder"]:
            assert name == "demo.swbproj" or name.startswith("demo.swbproj.tmp-"), outcome
        previous = runs
    assert sum(o["killed"] for o in outcomes) >= trials // 2  # most trials were really cut short
