"""Desktop integration files parse and agree with each other and with the code."""

from __future__ import annotations

import configparser
import xml.etree.ElementTree as ET
from pathlib import Path

from storage.models import FILE_SUFFIX

PACKAGING = Path(__file__).resolve().parent.parent / "packaging"
APP_ID = "org.scalingworkbench.workbench"


def test_packaging_is_data_only():
    # An __init__.py here would shadow PyPA's `packaging` when run from the repository root.
    assert not list(PACKAGING.rglob("__init__.py"))


def test_desktop_entry_is_complete():
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # keys are case-sensitive in desktop entries
    parser.read(PACKAGING / "scaling-workbench.desktop", encoding="utf-8")
    entry = parser["Desktop Entry"]
    assert entry["Type"] == "Application"
    assert entry["Exec"].split()[0] == "scaling-workbench"
    assert entry["Icon"] == APP_ID
    assert entry["Categories"].endswith(";")
    assert "application/x-scaling-workbench-project" in entry["MimeType"]


def test_metainfo_and_mime_agree():
    component = ET.parse(PACKAGING / f"{APP_ID}.metainfo.xml").getroot()
    assert component.findtext("id") == APP_ID
    assert APP_ID == APP_ID.lower()
    assert component.find("launchable").text == "scaling-workbench.desktop"
    ns = {"m": "http://www.freedesktop.org/standards/shared-mime-info"}
    mime = ET.parse(PACKAGING / "scaling-workbench-mime.xml").getroot()
    glob = mime.find("m:mime-type/m:glob", ns).get("pattern")
    assert glob == f"*{FILE_SUFFIX}"


def test_icon_is_svg():
    icon = PACKAGING / "icons/hicolor/scalable/apps" / f"{APP_ID}.svg"
    assert ET.parse(icon).getroot().tag.endswith("svg")
