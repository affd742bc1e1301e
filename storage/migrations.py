"""Schema versions of the project file and the ordered steps that upgrade them.

The version is ``PRAGMA user_version``. ``MIGRATIONS[k]`` turns a version-``k`` database
into version ``k + 1``; :func:`migrate` applies them in order, each in its own
transaction, on the *working copy* (an in-memory database): the file on disk is only
replaced when the user saves, and :mod:`storage.project` writes a backup copy
``NAME.swbproj.bak-v{old}`` beside it first.

Adding a version: write the step, append it to ``MIGRATIONS``, bump
``models.SCHEMA_VERSION``, change the ORM classes, and add a test that opens a file of the
previous layout (keep the old layout's DDL here, frozen, the way ``V0_SCHEMA`` is).

History:

- 0: the first layout: scenarios had no ``notes`` column.
- 1: ``scenarios.notes`` (text, default empty).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from storage.models import APPLICATION_ID, SCHEMA_VERSION

# The version-0 layout, frozen as it was shipped. Used to build test files; never changed.
V0_SCHEMA = """
CREATE TABLE metadata (
    key VARCHAR(64) NOT NULL PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE hardware_presets (
    key VARCHAR(200) NOT NULL PRIMARY KEY,
    name VARCHAR(200) NOT NULL,
    vendor VARCHAR(200) NOT NULL,
    builtin BOOLEAN NOT NULL,
    payload TEXT NOT NULL,
    created DATETIME NOT NULL,
    modified DATETIME NOT NULL
);
CREATE INDEX ix_hardware_presets_name ON hardware_presets (name);
CREATE TABLE scenarios (
    id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    kind VARCHAR(40) NOT NULL,
    name VARCHAR(200) NOT NULL,
    payload TEXT NOT NULL,
    created DATETIME NOT NULL,
    modified DATETIME NOT NULL,
    CONSTRAINT uq_scenarios_kind_name UNIQUE (kind, name)
);
"""

Migration = Callable[[sqlite3.Connection], None]


def _v0_to_v1(conn: sqlite3.Connection) -> None:
    """Scenarios gain free-text notes."""
    conn.execute("ALTER TABLE scenarios ADD COLUMN notes TEXT NOT NULL DEFAULT ''")


MIGRATIONS: list[Migration] = [_v0_to_v1]

assert len(MIGRATIONS) == SCHEMA_VERSION, "one migration step per schema version"


def get_user_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def get_application_id(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA application_id").fetchone()[0])


def stamp(conn: sqlite3.Connection, version: int) -> None:
    """Record ``version`` in the pragmas and the metadata table (inside the caller's transaction)."""
    conn.execute(f"PRAGMA user_version = {int(version)}")
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute(
        "INSERT INTO metadata (key, value) VALUES ('schema_version', ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (str(version),),
    )


def migrate(conn: sqlite3.Connection, from_version: int, to_version: int = SCHEMA_VERSION) -> list[int]:
    """Upgrade ``conn`` step by step from ``from_version``; returns the versions passed through.

    Each step and its version stamp commit together, so a failing step leaves the database
    at the last good version (the caller discards the working copy anyway).
    """
    if not 0 <= from_version <= to_version <= len(MIGRATIONS):
        raise ValueError(f"cannot migrate from schema {from_version} to {to_version}")
    passed = []
    for version in range(from_version, to_version):
        step = MIGRATIONS[version]
        conn.execute("BEGIN")
        try:
            step(conn)
            stamp(conn, version + 1)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        passed.append(version + 1)
    return passed


def create_v0(conn: sqlite3.Connection, app_version: str = "0.0.1", created: str = "2024-01-01 00:00:00") -> None:
    """Lay out an empty version-0 project in ``conn`` (tests and the migration benchmark)."""
    conn.executescript(V0_SCHEMA)
    conn.execute("INSERT INTO metadata VALUES ('schema_version', '0')")
    conn.execute("INSERT INTO metadata VALUES ('app_version', ?)", (app_version,))
    conn.execute("INSERT INTO metadata VALUES ('created', ?)", (created,))
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute("PRAGMA user_version = 0")
    conn.commit()


__all__ = [
    "V0_SCHEMA",
    "MIGRATIONS",
    "migrate",
    "stamp",
    "create_v0",
    "get_user_version",
    "get_application_id",
]
