"""Regenerate the README's pictures from the real widgets: ``python -m ui.screenshots docs``.

Runs headless (offscreen) on a throw-away project seeded like a first start, so the pictures
show what a new user sees, not anyone's own data.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path


def take(out_dir: Path) -> list[Path]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from storage import Project
    from ui.app import create_application
    from ui.main_window import MainWindow
    from workbench.kernels import seed_examples
    from workbench.scenarios import RooflineScenario

    app = create_application([sys.argv[0]])
    app.setOrganizationName("Scaling Workbench screenshots")  # keep the user's own settings out
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    with tempfile.TemporaryDirectory() as tmp:
        project = Project.create(Path(tmp) / "Planning.swbproj")
        window = MainWindow(project)
        window.resize(1920, 1080)
        window.show()
        window.raise_panel("roofline")
        window.panel("roofline").set_scenario(
            RooflineScenario(hardware=("h100-sxm", "b200"), kernels=tuple(seed_examples())))
        window.setFixedSize(1920, 1080)  # the offscreen screen is smaller; slides want this
        _settle()
        window.grab().save(str(out_dir / "screenshot.png"))
        written.append(out_dir / "screenshot.png")
        # The Run plan panel in front, on the README's 70B example (a sample of a new project).
        from presets import sample_scenarios
        from ui import theme

        example = next(s for _n, s in sample_scenarios() if s.kind == "run_plan" and s.n_gpus == 1024)
        window.document.replace_plan(example, "Open the 70B plan")
        window.raise_panel("run_plan")
        _settle()
        window.grab().save(str(out_dir / "run-plan.png"))
        written.append(out_dir / "run-plan.png")
        presentation = window.enter_presentation("run_plan")
        presentation.showNormal()
        presentation.setFixedSize(1920, 1080)
        _settle()
        presentation.grab().save(str(out_dir / "run-plan-presentation.png"))
        written.append(out_dir / "run-plan-presentation.png")
        window.exit_presentation()
        theme.apply_theme(app, "dark")
        _settle()
        window.grab().save(str(out_dir / "run-plan-dark.png"))
        written.append(out_dir / "run-plan-dark.png")
        theme.apply_theme(app, "light")
        window.raise_panel("roofline")
        # The roofline on its own at slide size, H100 against B200 with the seed kernels: in the
        # light theme, then on a projector in the dark one.
        from ui.panels.roofline import RooflinePanel

        for mode, name in (("light", "roofline.png"), ("dark", "roofline-dark.png")):
            theme.apply_theme(app, mode)
            QApplication.processEvents()
            panel = RooflinePanel(window.catalog, RooflineScenario(hardware=("h100-sxm", "b200"),
                                                                   kernels=tuple(seed_examples())))
            panel.resize(1600, 900)
            panel.show()
            _settle()
            panel.grab().save(str(out_dir / name))
            written.append(out_dir / name)
            panel.close()
        theme.apply_theme(app, "light")
        window.raise_panel("roofline")
        presentation = window.enter_presentation("roofline")
        presentation.showNormal()
        presentation.setFixedSize(1920, 1080)
        _settle()
        presentation.grab().save(str(out_dir / "roofline-presentation.png"))
        written.append(out_dir / "roofline-presentation.png")
        window.exit_presentation()
        window.undo_stack.setClean()  # the pictures' edits are not the user's: nothing to save
        window.close()
        project.close()
    app.processEvents()
    return written


def _settle() -> None:
    """Deliver what the last step posted, and what that posted in turn (the window fits its
    docks from a zero-time timer after it is shown): a picture taken after a single turn of
    the event loop could show the window before or after that fit."""
    from PySide6.QtWidgets import QApplication

    for _ in range(3):
        QApplication.processEvents()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0] if args else "docs")
    for path in take(out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
