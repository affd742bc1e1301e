"""The README's run-plan example prints what the README says it prints."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def _example() -> tuple[str, str]:
    text = README.read_text(encoding="utf-8")
    marker = text.index("<!-- plan-example:")
    code, output = re.findall(r"```(?:python|text)\n(.*?)```", text[marker:], flags=re.S)[:2]
    return code, output


def test_the_readme_plan_example_prints_what_the_readme_shows():
    code, expected = _example()
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, "README.md", "exec"), {})  # the README's own code, nothing else
    assert printed.getvalue() == expected


def test_the_example_shows_the_numbers_the_issue_asks_for():
    _, output = _example()
    for needle in ("tokens/s", "MFU", "tensor_parallel", "GiB", "days", "MWh", "tCO2e", "USD"):
        assert needle in output
