"""SQLAlchemy 2.x typed ORM tables of a project file (the current schema).

Payloads are JSON text written and parsed by ``workbench`` (``Hardware.to_dict`` and
``Scenario.to_json``): no pickle, nothing executable. Timestamps are naive UTC.

The schema version lives in ``PRAGMA user_version`` (and, for people reading the file with
other tools, in the ``metadata`` table); ``PRAGMA application_id`` marks the file as ours.
Older layouts and the steps that upgrade them are in :mod:`storage.migrations`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Boolean, DateTime, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

from storage.constants import APPLICATION_ID, FILE_SUFFIX, SCHEMA_VERSION  # noqa: F401 - the schema's marks


def utcnow() -> datetime:
    """Now, as the naive UTC datetime stored in the file."""
    return datetime.now(UTC).replace(tzinfo=None)


#: What a stored time that is not a time (a damaged or altered file) reads as.
UNKNOWN_TIME = datetime(1970, 1, 1)


class Timestamp(TypeDecorator):
    """A naive UTC ``DateTime`` (stored as SQLAlchemy stores one) that reads a value it
    cannot parse as :data:`UNKNOWN_TIME` instead of failing the query that loaded the row:
    one damaged time in a file must not stop its rows from being edited or deleted."""

    impl = DateTime
    cache_ok = True

    def result_processor(self, dialect: Any, coltype: Any) -> Any:
        inner = self.impl_instance.result_processor(dialect, coltype)
        if inner is None:
            return None

        def process(value: Any) -> Any:
            try:
                return inner(value)
            except (ValueError, TypeError, OverflowError):
                return UNKNOWN_TIME

        return process


class Base(DeclarativeBase):
    pass


class MetadataEntry(Base):
    """Key/value facts about the file: schema_version, app_version, created."""

    __tablename__ = "metadata"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class HardwarePreset(Base):
    """A hardware preset: built-in ones copied in at creation, the user's own beside them."""

    __tablename__ = "hardware_presets"

    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    vendor: Mapped[str] = mapped_column(String(200), default="")
    builtin: Mapped[bool] = mapped_column(Boolean, default=False)
    payload: Mapped[str] = mapped_column(Text)  # JSON of Hardware.to_dict()
    created: Mapped[datetime] = mapped_column(Timestamp, default=utcnow)
    modified: Mapped[datetime] = mapped_column(Timestamp, default=utcnow)

    __table_args__ = (Index("ix_hardware_presets_name", "name"),)


class SavedScenario(Base):
    """A saved scenario of one panel; names are unique per kind."""

    __tablename__ = "scenarios"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    kind: Mapped[str] = mapped_column(String(40))
    name: Mapped[str] = mapped_column(String(200))
    notes: Mapped[str] = mapped_column(Text, default="")
    payload: Mapped[str] = mapped_column(Text)  # JSON of Scenario.to_json()
    created: Mapped[datetime] = mapped_column(Timestamp, default=utcnow)
    modified: Mapped[datetime] = mapped_column(Timestamp, default=utcnow)

    # The unique index also serves listing ordered by (kind, name) and look-up by name.
    __table_args__ = (UniqueConstraint("kind", "name", name="uq_scenarios_kind_name"),)


# Columns each table must have for the current schema (checked after open and migration).
REQUIRED_COLUMNS: dict[str, set[str]] = {
    table.name: {c.name for c in table.columns} for table in Base.metadata.sorted_tables
}

__all__ = [
    "APPLICATION_ID",
    "SCHEMA_VERSION",
    "FILE_SUFFIX",
    "Base",
    "MetadataEntry",
    "HardwarePreset",
    "SavedScenario",
    "REQUIRED_COLUMNS",
    "utcnow",
    "Timestamp",
    "UNKNOWN_TIME",
]
