"""Running the command line from a test as a user runs it, with what it printed."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout

from ui.cli import main


def run(*args) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``scaling-workbench ARGS``; Qt's offscreen plugin notice
    about size hints, which is not the program's, is left out of stderr."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([str(a) for a in args])
    lines = [line for line in err.getvalue().splitlines() if "propagateSizeHints" not in line]
    return code, out.getvalue(), "\n".join(lines)
