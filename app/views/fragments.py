"""Markup rendered once and kept by the worker, keyed by everything it shows.

The inbox draws fifty rows a page, and an agent's inbox shows mostly the rows it showed a
moment ago (the same page again, a live inbox's refresh, a teammate on the same application).
Rendering a row is the larger part of drawing it (benchmarks/notes.md), so each worker keeps
the rows it rendered, keyed by a tuple of every value the row's markup is made from: a row
whose thread, sender, tags, assignee or age changed has another key, and is rendered anew.
Nothing is invalidated, and nothing stale can be shown, as long as the key holds all the row
shows; what no longer matches any page is dropped, least recently used first, once the cache
holds :data:`KEPT` fragments (an inbox row takes 2.6 KB with its key, measured: 11 MB a worker
when full, beside the 120 MB a worker holds anyway).

Templates are read once per process unless they reload (``TEMPLATES_AUTO_RELOAD``, the debug
mode's default): then nothing is kept, so that an edited template shows at once.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable

from markupsafe import Markup
from quart import Quart, current_app

from app.views.rendering import plain_environment

KEPT = 4096


class Fragments:
    """A bounded map of keys to rendered markup, least recently used dropped first."""

    __slots__ = ("_kept", "_size")

    def __init__(self, size: int = KEPT) -> None:
        self._kept: OrderedDict[Hashable, Markup] = OrderedDict()
        self._size = size

    def get(self, key: Hashable) -> Markup | None:
        """The markup kept for ``key``, or None (it is then rendered and :meth:`keep` given)."""
        found = self._kept.get(key)
        if found is not None:
            self._kept.move_to_end(key)
        return found

    def keep(self, key: Hashable, markup: Markup) -> Markup:
        """Keep ``markup`` for ``key`` (when the cache keeps anything) and return it."""
        if self._size:
            self._kept[key] = markup
            if len(self._kept) > self._size:
                self._kept.popitem(last=False)
        return markup

    def __len__(self) -> int:
        return len(self._kept)


def fragments(name: str) -> Fragments:
    """The app's fragments of one kind (every app of a test run has its own), keeping nothing
    while templates reload."""
    app: Quart = current_app._get_current_object()  # type: ignore[attr-defined]  # LocalProxy's
    key = f"earful_fragments:{name}"
    found: Fragments | None = app.extensions.get(key)
    if found is None:
        found = app.extensions[key] = Fragments(0 if plain_environment(app).auto_reload else KEPT)
    return found
