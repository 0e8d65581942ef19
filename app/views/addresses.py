"""A page's many links to endpoints whose path arguments are ids, built from one pattern each.

The thread page links to nineteen actions of its thread, the inbox to each of its fifty
threads, all carrying the inbox's filters in their query. Through ``url_for`` every link is
Werkzeug's builder again (the endpoint's rules, each argument's converter, the URL defaults,
the query encoded anew): a tenth of the thread page's time (benchmarks/notes.md). An endpoint
whose path arguments are all ids (``app.routing.IdConverter``: the id's digits) has the same
text around them for any ids, so :class:`IdLinks` builds that text once per endpoint and
formats the ids into it, and takes the query from the first link it builds through
``url_for``, as ``url_for`` wrote it. Anything else (an argument that is not an int, one that
goes to the query) is ``url_for``'s.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from quart import Quart, current_app, request, url_for

# Written in place of each id when an endpoint's pattern is built: numbers no fixed part of a
# route holds (each must then appear exactly once, or the endpoint is left to url_for).
_STAND_IN = 987_654_300

Patterns = dict[tuple[str, str, tuple[str, ...]], str | None]


def _patterns() -> Patterns:
    """The patterns built so far, kept on the app (every app of a test run has its own)."""
    app: Quart = current_app._get_current_object()  # type: ignore[attr-defined]  # LocalProxy's
    found: Patterns | None = app.extensions.get("earful_id_paths")
    if found is None:
        found = app.extensions["earful_id_paths"] = {}
    return found


def _build_pattern(endpoint: str, names: tuple[str, ...]) -> str | None:
    stand_ins = {name: str(_STAND_IN + index) for index, name in enumerate(names)}
    values: dict[str, Any] = {name: int(value) for name, value in stand_ins.items()}
    built = url_for(endpoint, **values)
    if "?" in built or any(built.count(value) != 1 for value in stand_ins.values()):
        return None  # an argument went to the query, or a stand-in is ambiguous
    pattern = built.replace("{", "{{").replace("}", "}}")
    for name, value in stand_ins.items():
        pattern = pattern.replace(value, "{" + name + "}")
    return pattern


class IdLinks:
    """``url_for(endpoint, **ids, **more, **query)`` as ``links(endpoint, **more)`` (``more``:
    further ids), for the links of one page: the same addresses, from the endpoints' patterns."""

    __slots__ = ("_ids", "_patterns", "_query", "_root", "_suffix")

    def __init__(self, query: Mapping[str, Any], **ids: int) -> None:
        self._query = query
        self._ids = ids
        self._patterns = _patterns()
        self._root = request.root_path  # the patterns hold it: kept per root path
        self._suffix: str | None = None  # the query as url_for writes it, once it has

    def pattern(self, endpoint: str, names: tuple[str, ...]) -> str | None:
        """The endpoint's path with ``{name}`` for each of ``names`` (a format string), or None
        when the endpoint does not take them all as path arguments."""
        key = (self._root, endpoint, names)
        if key not in self._patterns:
            self._patterns[key] = _build_pattern(endpoint, names)
        return self._patterns[key]

    def __call__(self, endpoint: str, **more: int) -> str:
        values: dict[str, Any] = {**self._ids, **more}
        pattern = self.pattern(endpoint, tuple(values))
        if (
            pattern is None
            or self._suffix is None
            or any(type(value) is not int for value in values.values())
        ):
            built = url_for(endpoint, **values, **self._query)
            if pattern is not None and self._suffix is None:
                self._suffix = "".join(built.partition("?")[1:])
            return built
        return pattern.format_map(values) + self._suffix

    def by_id(self, endpoint: str, name: str) -> Callable[[int], str]:
        """``links(endpoint, name=value)`` as a function of the value alone, for the fifty rows of
        a page: the text around one link's id, with another id between."""
        stand_in = str(_STAND_IN)
        sample = self(endpoint, **{name: _STAND_IN})
        if sample.count(stand_in) != 1:  # the query holds the same digits
            return lambda value: self(endpoint, **{name: value})
        head, _, tail = sample.partition(stand_in)
        return lambda value: f"{head}{int(value)}{tail}"


def address(endpoint: str, **ids: Any) -> str:
    """``url_for(endpoint, **ids)`` for a link whose arguments are all ids of its path (the top
    bar's links, an application's tabs: on every page), from the endpoint's pattern, built once
    per app and root path; anything else is ``url_for``'s."""
    pattern = IdLinks({}).pattern(endpoint, tuple(ids))
    if pattern is None or any(type(value) is not int for value in ids.values()):
        return url_for(endpoint, **ids)
    return pattern.format_map(ids)
