"""The project file: SQLite via SQLAlchemy 2.x, with atomic save and schema migrations."""
