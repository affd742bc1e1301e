"""A real X window: the installed app on Qt's xcb platform under Xvfb, looked at with the X tools.

``install-desktop`` installs the launcher into a throw-away XDG data directory; the test starts
the command of its ``Exec`` line on a project (as a file manager does on a double click), on an
Xvfb of its own, waits for the main window, checks what the X server knows about it (title,
WM_CLASS against the launcher's StartupWMClass, the application id, the icon), takes a
screenshot with ``xwd`` and checks it is the drawn window, then closes it and expects a clean
exit. With ``SCALING_WORKBENCH_BUNDLE`` set, the bundle's executable gets the same test.

Needs Xvfb (Debian ``xvfb``), ``xwininfo``/``xprop`` (``x11-utils``), ``xwd`` (``x11-apps``)
and the xcb libraries Qt's plugin links to; ``.ci/run`` installs them. Without them the test
is skipped with the reason, except where ``SCALING_WORKBENCH_REQUIRE_REFERENCES`` is set (CI).
``SCALING_WORKBENCH_SCREENSHOT_DIR=docs`` also saves the screenshot there.

Every wait is a poll of a condition with a deadline: the Xvfb start by ``-displayfd`` (the
server writes its display number once it accepts clients), the window by ``xwininfo``, the
drawing by the screenshot's content, the exit by ``wait``.
"""

from __future__ import annotations

import os
import re
import select
import shlex
import shutil
import struct
import subprocess
import time
from pathlib import Path

import pytest

from ui.app import APP_ID, APP_NAME, QUIT_AFTER_START_ENV

DEADLINE_S = 60.0
POLL_S = 0.2
SCREEN = (1920, 1080)


def _required(name: str, reason: str) -> None:
    if os.environ.get("SCALING_WORKBENCH_REQUIRE_REFERENCES"):
        pytest.fail(f"required in CI: {reason}")
    pytest.skip(reason)


def _tool(name: str, package: str) -> str:
    path = shutil.which(name)
    if path is None:
        _required(name, f"{name} is not installed (Debian package {package}; .ci/run installs it)")
    return path


def missing_xcb_libraries() -> list[str]:
    """The shared libraries Qt's xcb plugin cannot find. Qt itself then prints "xcb-cursor0 or
    libxcb-cursor0 is needed" whatever is missing (and also when no X server answers)."""
    import PySide6

    qt = Path(PySide6.__file__).parent / "Qt"
    missing: set[str] = set()
    for library in (qt / "plugins/platforms/libqxcb.so", qt / "lib/libQt6XcbQpa.so.6"):
        done = subprocess.run(["ldd", str(library)], capture_output=True, text=True, timeout=30)
        missing.update(line.split()[0] for line in done.stdout.splitlines() if "not found" in line)
    return sorted(missing)


@pytest.fixture(scope="module")
def display(tmp_path_factory):
    xvfb = _tool("Xvfb", "xvfb")
    _tool("xwininfo", "x11-utils")
    _tool("xprop", "x11-utils")
    _tool("xwd", "x11-apps")
    missing = missing_xcb_libraries()
    if missing:
        _required("xcb", f"Qt's xcb plugin cannot load without {', '.join(missing)} "
                         "(Debian packages libxcb-*; .ci/run installs them)")
    log = tmp_path_factory.mktemp("xvfb") / "xvfb.log"
    read_end, write_end = os.pipe()
    with log.open("wb") as out:
        server = subprocess.Popen([xvfb, "-displayfd", str(write_end), "-screen", "0",
                                   f"{SCREEN[0]}x{SCREEN[1]}x24", "-nolisten", "tcp", "-noreset"],
                                  pass_fds=(write_end,), stdout=out, stderr=subprocess.STDOUT)
    os.close(write_end)
    number = b""
    deadline = time.monotonic() + DEADLINE_S
    try:
        while not number.endswith(b"\n"):
            left = deadline - time.monotonic()
            ready, _, _ = select.select([read_end], [], [], max(left, 0))
            chunk = os.read(read_end, 16) if ready else b""
            if not chunk:  # Xvfb exited (end of the pipe) or the deadline passed
                server.kill()
                server.wait(10)
                pytest.fail(f"Xvfb did not start: {log.read_text(errors='replace')[-2000:]}")
            number += chunk
    finally:
        os.close(read_end)
    try:
        yield f":{int(number)}"
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(10)


def _x(display: str, *command: str) -> str:
    done = subprocess.run(list(command), env={**os.environ, "DISPLAY": display}, capture_output=True,
                          text=True, timeout=30)
    assert done.returncode == 0, f"{command[0]}: {done.stderr}"
    return done.stdout


_TREE_LINE = re.compile(r'^\s*(0x[0-9a-f]+) "(.*)": \((.*)\)\s+(\d+)x(\d+)\+(-?\d+)\+(-?\d+)')


def _find_window(display: str, title: str) -> str | None:
    """The id of a viewable top-level window titled ``title``, or None."""
    for line in _x(display, "xwininfo", "-root", "-children").splitlines():
        match = _TREE_LINE.match(line)
        if match and match.group(2) == title:
            info = _x(display, "xwininfo", "-id", match.group(1))
            if "Map State: IsViewable" in info:
                return match.group(1)
    return None


def read_xwd(data: bytes):
    """An ``xwd`` dump (ZPixmap, 32 bits a pixel: what a 24-bit Xvfb gives) as a QImage."""
    import numpy as np
    from PySide6.QtGui import QImage

    fields = struct.unpack(">25I", data[:100])  # the header is written most significant byte first
    header_size, _version, pixmap_format, _depth, width, height = fields[:6]
    byte_order, bits_per_pixel, bytes_per_line = fields[7], fields[11], fields[12]
    red_mask, green_mask, blue_mask, ncolors = fields[14], fields[15], fields[16], fields[19]
    assert pixmap_format == 2 and bits_per_pixel == 32, (pixmap_format, bits_per_pixel)
    start = header_size + 12 * ncolors  # then one XWDColor (12 bytes) per colour
    dtype = "<u4" if byte_order == 0 else ">u4"
    rows = np.frombuffer(data, dtype=dtype, count=height * bytes_per_line // 4, offset=start)
    pixels = rows.reshape(height, bytes_per_line // 4)[:, :width].astype(np.uint32)

    def channel(mask: int):
        shift = (mask & -mask).bit_length() - 1
        return (pixels & mask) >> shift

    argb = (0xFF000000 | (channel(red_mask) << 16) | (channel(green_mask) << 8)
            | channel(blue_mask)).astype("<u4")
    return QImage(argb.tobytes(), width, height, width * 4, QImage.Format.Format_ARGB32).copy()


def _distinct_colours(image, step: int = 8) -> int:
    return len({image.pixel(x, y) for x in range(0, image.width(), step)
                for y in range(0, image.height(), step)})


@pytest.mark.parametrize("launcher", ["environment", "bundle"])
def test_the_installed_app_opens_a_real_window(display, launcher, tmp_path, qapp):
    import sys

    if launcher == "bundle":
        bundle = os.environ.get("SCALING_WORKBENCH_BUNDLE")
        if not bundle:
            _required("bundle", "no bundle to test (SCALING_WORKBENCH_BUNDLE is not set)")
        program = [str(Path(bundle).resolve())]
    else:
        program = [sys.executable, "-m", "ui.cli"]
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("QT_", "WAYLAND"))}
    env.update(HOME=str(home), XDG_DATA_HOME=str(home / "data"), XDG_CONFIG_HOME=str(home / "config"),
               XDG_CACHE_HOME=str(home / "cache"), SCALING_WORKBENCH_DATA_DIR=str(home / "data/sw"))
    if launcher == "bundle":
        env = {k: v for k, v in env.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    project = tmp_path / "Cluster plan.swbproj"  # a space: the launcher's quoting is exercised
    for command in (["new", str(project)], ["install-desktop"]):
        done = subprocess.run([*program, *command], env={**env, "QT_QPA_PLATFORM": "offscreen"},
                              capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, done.stderr
    entry = (home / "data/applications" / f"{APP_ID}.desktop").read_text(encoding="utf-8")
    exec_line = next(line for line in entry.splitlines() if line.startswith("Exec="))
    argv = [str(project) if arg == "%f" else arg
            for arg in shlex.split(exec_line[len("Exec="):].replace("\\\\", "\\"))]
    wm_class = next(line for line in entry.splitlines() if line.startswith("StartupWMClass="))

    env.update(DISPLAY=display, QT_QPA_PLATFORM="xcb", **{QUIT_AFTER_START_ENV: "stdin"})
    stderr_log = tmp_path / "app.stderr"
    with stderr_log.open("w") as err:
        app = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                               stderr=err)
    try:
        title = f"{project.stem} - {APP_NAME}"
        window = None
        deadline = time.monotonic() + DEADLINE_S
        while window is None:
            assert app.poll() is None, f"the app exited ({app.returncode}): {stderr_log.read_text()}"
            assert time.monotonic() < deadline, f"no window {title!r}: {stderr_log.read_text()}"
            window = _find_window(display, title)
            if window is None:
                time.sleep(POLL_S)

        props = _x(display, "xprop", "-id", window, "-notype", "WM_CLASS", "_NET_WM_NAME",
                   "_GTK_APPLICATION_ID", "_KDE_NET_WM_DESKTOP_FILE")
        assert f'_NET_WM_NAME = "{title}"' in props
        assert f'"{wm_class.split("=", 1)[1]}"' in props.split("WM_CLASS = ", 1)[1].splitlines()[0]
        assert f'_GTK_APPLICATION_ID = "{APP_ID}"' in props
        assert f'_KDE_NET_WM_DESKTOP_FILE = "{APP_ID}"' in props
        # Qt hands the window icon to the X server: width, height, then the pixels
        icon = _x(display, "xprop", "-id", window, "-len", "16", "-notype", "-f", "_NET_WM_ICON", "32c",
                  "_NET_WM_ICON")
        icon_size = [int(n) for n in icon.split("=", 1)[1].split(",")[:2]]
        assert min(icon_size) >= 16, icon

        geometry = _x(display, "xwininfo", "-id", window)
        width = int(re.search(r"Width: (\d+)", geometry).group(1))
        height = int(re.search(r"Height: (\d+)", geometry).group(1))
        assert width >= 800 and height >= 500
        shot = None
        while True:  # mapped comes before drawn: poll until the picture shows the window's parts
            image = read_xwd(subprocess.run(["xwd", "-id", window, "-silent"], env=env,
                                            capture_output=True, timeout=30, check=True).stdout)
            if _distinct_colours(image) > 20:
                shot = image
                break
            assert time.monotonic() < deadline, "the window was never drawn"
            time.sleep(POLL_S)
        assert (shot.width(), shot.height()) == (width, height)
        shot.save(str(tmp_path / "real-window.png"))
        folder = os.environ.get("SCALING_WORKBENCH_SCREENSHOT_DIR")
        if folder:
            Path(folder).mkdir(parents=True, exist_ok=True)
            shot.save(str(Path(folder) / f"real-window-{launcher}.png"))

        app.stdin.close()  # the hook closes the window as a user does, then the app exits
        assert app.wait(DEADLINE_S) == 0, stderr_log.read_text()
    finally:
        if app.poll() is None:
            app.kill()
            app.wait(10)
    log = stderr_log.read_text()
    assert "main window shown on the xcb platform" in log
    for bad in ("Traceback", "xcb-cursor0", "QObject::", "QThread", "Segmentation", "Fatal Python"):
        assert bad not in log, log
