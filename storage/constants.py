"""What identifies a project file, without the database layer: the file suffix, the SQLite
``application_id`` and the schema version. Kept apart from :mod:`storage.models` so that
reading them (a file dialog's filter, a file check) does not import SQLAlchemy."""

# "SWBP" as a big-endian 32-bit integer: a random SQLite file has application_id 0.
APPLICATION_ID = 0x53574250
# The layout described by storage.models. Bump it together with a new migration step.
SCHEMA_VERSION = 1
FILE_SUFFIX = ".swbproj"
