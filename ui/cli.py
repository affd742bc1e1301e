"""Command line entry point ``scaling-workbench``.

    scaling-workbench                  the GUI on the default project
    scaling-workbench PROJECT          the GUI on PROJECT
    scaling-workbench new PROJECT      create a project with the built-in presets and samples
    scaling-workbench list PROJECT     print the saved scenarios, "kind<TAB>name" one a line
    scaling-workbench export PROJECT --scenario NAME [--kind KIND] [--png F] [--width PX]
                                       [--svg F] [--csv F] [--title [TEXT]] [--assumptions [TEXT]]
                                       render a saved scenario headless and write the files
    scaling-workbench --version

A first argument that is a sub-command name ("new", "list", "export") is the sub-command;
to open a project file literally called ``new``, write ``./new``.

Sub-commands that need no display (``new``, ``list``) never import Qt, so they run on a
server without Qt's system libraries. Every failure exits non-zero with one line on stderr
that names the file and the problem.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

import workbench

PROG = "scaling-workbench"

# Exit codes: 0 success, 1 a failure with a message on stderr, 2 bad usage (argparse).
EXIT_OK = 0
EXIT_FAILURE = 1


def _escapes() -> dict[int, str]:
    """Characters a terminal acts on, or that hide or reorder text, and their visible escapes:
    C0 and C1 controls and DEL (ESC starts the sequences that set a window title or clear
    the screen, BEL rings), line and paragraph separators, bidirectional overrides, and lone
    surrogates (a file name that is not UTF-8), which cannot even be printed."""
    table = {code: f"\\x{code:02x}" for code in (*range(0x20), 0x7F, *range(0x80, 0xA0))}
    table.update({ord("\t"): "\\t", ord("\n"): "\\n", ord("\r"): "\\r"})
    for code in (0x061C, 0x200E, 0x200F, 0x2028, 0x2029, *range(0x202A, 0x202F), *range(0x2066, 0x206A),
                 *range(0xD800, 0xE000)):
        table[code] = f"\\u{code:04x}"
    return table


_ESCAPES = _escapes()
_ESCAPES_WITH_BACKSLASH = {**_ESCAPES, ord("\\"): "\\\\"}


def _message(text: object) -> str:
    """A message on one line, safe for a terminal: runs of white space become one space and
    what is left of control characters shows as escapes (a backslash stays as it is)."""
    return " ".join(str(text).split()).translate(_ESCAPES)


def _fail(message: str) -> int:
    print(f"{PROG}: " + _message(message), file=sys.stderr)
    return EXIT_FAILURE


def _one_line(text: str) -> str:
    """A stored name printed on one line and safe for a terminal: a backslash, tabs, line
    breaks and every control character become visible escapes (ESC as \\x1b)."""
    return str(text).translate(_ESCAPES_WITH_BACKSLASH)


# -- sub-commands ----------------------------------------------------------------------------
def _cmd_new(args: argparse.Namespace) -> int:
    from storage import Project, ProjectError

    try:
        project = Project.create(args.project)
    except ProjectError as exc:
        return _fail(str(exc))
    except ValueError as exc:  # a broken preset data file
        return _fail(f"{args.project}: could not seed the project ({exc})")
    with project:
        count = len(project.list_scenarios())
        presets = len(project.list_presets())
    print(f"created {_one_line(args.project)} with {presets} hardware presets and {count} sample scenarios")
    return EXIT_OK


def _cmd_list(args: argparse.Namespace) -> int:
    from storage import Project, ProjectError

    try:
        # For reading only: nothing is written or removed beside the file (an old schema is
        # migrated in memory, no backup is made).
        project = Project.open(args.project, read_only=True)
    except ProjectError as exc:
        return _fail(str(exc))
    with project:
        try:
            records = project.list_scenarios(args.kind)
            problems = project.problems
        except ProjectError as exc:
            return _fail(str(exc))
    out = sys.stdout
    for record in records:
        out.write(f"{_one_line(record.kind)}\t{_one_line(record.name)}\n")
    out.flush()
    for problem in problems:
        print(f"{PROG}: warning: {_message(args.project)}: {_message(problem)}", file=sys.stderr)
    return EXIT_OK


def _add_new(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "new", help="create a project with the built-in presets and sample scenarios",
        description="Create a project file seeded with the built-in hardware presets and sample "
                    "scenarios. An existing file is never overwritten.",
    )
    parser.add_argument("project", help="the new project file (conventionally NAME.swbproj)")
    parser.set_defaults(handler=_cmd_new)


def _kinds() -> str:
    # the scenario kinds workbench knows (the panels' registry needs Qt, which these commands avoid)
    from workbench.scenarios import SCENARIO_TYPES

    return ", ".join(SCENARIO_TYPES)


def _add_list(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "list", help="print the saved scenarios, kind<TAB>name one a line",
        description="Print the saved scenarios of a project, one a line: kind, a tab, the name.",
    )
    parser.add_argument("project", help="the project file")
    parser.add_argument("--kind", help=f"only scenarios of this kind ({_kinds()})")
    parser.set_defaults(handler=_cmd_list)


def _cmd_export(args: argparse.Namespace) -> int:
    # Qt is imported inside ui.headless only once the arguments are known to be sound.
    from pathlib import Path

    from ui.headless import ExportRequest, HeadlessError, ensure_platform, export_scenario

    ensure_platform()  # before anything imports Qt
    request = ExportRequest(
        project=Path(args.project), scenario=args.scenario, kind=args.kind,
        png=Path(args.png) if args.png else None, width_px=args.width,
        svg=Path(args.svg) if args.svg else None, csv=Path(args.csv) if args.csv else None,
        background=args.background, title=args.title, assumptions=args.assumptions,
    )
    try:
        written = export_scenario(request)
    except HeadlessError as exc:
        return _fail(str(exc))
    for path in written:
        print(f"wrote {_one_line(str(path))}")
    return EXIT_OK


def _add_export(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "export", help="render a saved scenario headless and write PNG, SVG and/or CSV files",
        description="Render the chart of a saved scenario without a window (Qt's offscreen platform) "
                    "and write it as PNG (the scenario embedded) and/or SVG, and its numbers as CSV. "
                    "The project file is opened read-only and never modified.",
    )
    parser.add_argument("project", help="the project file")
    parser.add_argument("--scenario", required=True, metavar="NAME", help="name of the saved scenario")
    parser.add_argument("--kind", help=f"the scenario's panel ({_kinds()}) when the name is used by several")
    parser.add_argument("--png", metavar="FILE", help="write the chart as a PNG image")
    parser.add_argument("--width", type=int, default=1920, metavar="PX", help="PNG width in pixels (default 1920)")
    parser.add_argument("--svg", metavar="FILE", help="write the chart as an SVG drawing")
    parser.add_argument("--csv", metavar="FILE",
                        help="write the panel's results table and the chart's numbers as CSV (units named)")
    parser.add_argument("--background", choices=("white", "transparent"), default="white",
                        help="PNG/SVG background (default white)")
    parser.add_argument("--title", nargs="?", const="", metavar="TEXT",
                        help="for a slide: a title above the chart (PNG/SVG); without TEXT, the scenario's name")
    parser.add_argument("--assumptions", nargs="?", const="", metavar="TEXT",
                        help="for a slide: one line of assumptions above the chart (PNG/SVG); without TEXT, "
                             "the scenario's hardware, GPUs, precision, model size and tokens")
    parser.set_defaults(handler=_cmd_export)


def _add_install_desktop(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "install-desktop", help="add the app to this user's menus, file manager and icons",
        description="Install the launcher, the project file's MIME type, the icons and the AppStream "
                    "metainfo under the user's XDG data directory (~/.local/share), pointing at this "
                    "installation of the app, and refresh the desktop's caches where the tools exist.",
    )
    parser.add_argument("--uninstall", action="store_true", help="remove those files instead")

    def run(args: argparse.Namespace) -> int:
        from ui.desktop_install import run as install_desktop  # Qt renders the PNG icons

        return install_desktop(args)

    parser.set_defaults(handler=run)


# Sub-commands by name: each adds its parser (which sets ``handler``) to the subparsers.
# ``export`` imports Qt only inside its handler (ui.headless), with QT_QPA_PLATFORM=offscreen.
SUBCOMMANDS: dict[str, Callable[[argparse._SubParsersAction], None]] = {
    "new": _add_new,
    "list": _add_list,
    "export": _add_export,
    "install-desktop": _add_install_desktop,
}


def _command_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="Scaling Workbench commands.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in SUBCOMMANDS.values():
        add(commands)
    return parser


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Plan, measure and explain the performance of large GPU training runs.",
        epilog="commands (run 'scaling-workbench COMMAND --help'): " + ", ".join(SUBCOMMANDS),
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {workbench.__version__}")
    parser.add_argument("project", nargs="?", help="project file to open in the GUI")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in SUBCOMMANDS:
        args = _command_parser().parse_args(argv)
        return args.handler(args)
    args = _parser().parse_args(argv)
    from ui.app import run_gui  # Qt is imported only when a window is wanted

    return run_gui(args.project)


if __name__ == "__main__":
    sys.exit(main())
