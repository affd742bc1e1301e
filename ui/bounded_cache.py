"""A cache that forgets everything it holds once it is full.

Looks and measurements whose keys come back (a label's text in a font, a bar's colours, a
theme's point styles) are made once and looked up after; the keys of values a user types do
not come back, and such a cache must not grow with every one of them. Emptying it when full is
enough for keys that recur: they are made again on their next use."""

from __future__ import annotations

from typing import Any


class BoundedCache(dict):
    """A dict holding at most ``limit`` entries: :meth:`keep` empties it when it is full."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = int(limit)

    def keep(self, key: Any, value: Any) -> Any:
        """Store ``value`` under ``key`` (emptying the cache first when full); returns it."""
        if len(self) >= self.limit:
            self.clear()
        self[key] = value
        return value


__all__ = ["BoundedCache"]
