"""Command line entry point ``scaling-workbench``.

Sub-commands that need no display (``new``, ``list``) never import Qt, so they run on a
server without Qt's system libraries. Every failure exits non-zero with one line on stderr.
"""

from __future__ import annotations

import argparse
import sys

import workbench


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="scaling-workbench",
        description="Plan, measure and explain the performance of large GPU training runs.",
    )
    parser.add_argument("--version", action="version", version=f"scaling-workbench {workbench.__version__}")
    parser.add_argument("project", nargs="?", help="project file to open in the GUI")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from ui.app import run_gui  # Qt is imported only when a window is wanted

    return run_gui(args.project)


if __name__ == "__main__":
    sys.exit(main())
