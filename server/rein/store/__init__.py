"""Session persistence (the only place sqlite3 is imported)."""

from rein.store.persistence import MAIN_MEMORY, StorePersistence
from rein.store.session_images import SessionRecord
from rein.store.sqlite import SCHEMA_VERSION, SqliteStore, default_storage_path

__all__ = [
    "MAIN_MEMORY",
    "SCHEMA_VERSION",
    "SessionRecord",
    "SqliteStore",
    "StorePersistence",
    "default_storage_path",
]
