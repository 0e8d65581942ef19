"""What every test's app would compile again: Werkzeug's URL builders and Jinja's templates.

The tests build an app for almost every test (each with its own settings and data dir), and a
new app compiles everything afresh. py-spy over a run of tests/api and tests/views put most of a
typical test's setup there:

- Binding a rule to a map makes Werkzeug write two small functions for it (building the rule's
  URL with and without extra arguments) from an AST, then ``compile`` and ``exec`` them: about
  0.6 ms a rule for 168 rules, four fifths of ``create_app``. The functions depend only on the
  rule's text, its parsed parts, its defaults and which of the two builders it is (they reach
  the rule's converters through their ``self`` argument when called), so one function serves
  every app's copy of a rule.
- A new app's Jinja environment parses and compiles each template it renders again (17 % of a
  run of page tests). Jinja's own bytecode cache, kept for the session in memory, hands every
  app the code compiled first; its key holds the template's name and source checksum, and here
  whether the environment renders asynchronously (the code differs).

Production builds the app once per worker and keeps both as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jinja2.bccache import Bucket, BytecodeCache
from quart import Quart
from werkzeug.routing.rules import Rule

_compile_builder = Rule._compile_builder
_builders: dict[tuple[object, ...], Callable[..., tuple[str, str]]] = {}


def _cached_compile_builder(self: Rule, append_unknown: bool = True) -> Callable[..., tuple[str, str]]:
    defaults: dict[str, Any] = self.defaults or {}
    key = (self.rule, tuple(self._trace), append_unknown, repr(sorted(defaults.items())))
    builder = _builders.get(key)
    if builder is None:
        builder = _builders[key] = _compile_builder(self, append_unknown)
    return builder


class SessionTemplates(BytecodeCache):
    """Compiled templates kept in memory for the test session."""

    def __init__(self) -> None:
        self._code: dict[tuple[bool, str], bytes] = {}

    def load_bytecode(self, bucket: Bucket) -> None:
        code = self._code.get((bucket.environment.is_async, bucket.key))
        if code is not None:
            bucket.bytecode_from_string(code)

    def dump_bytecode(self, bucket: Bucket) -> None:
        self._code[(bucket.environment.is_async, bucket.key)] = bucket.bytecode_to_string()


def compile_once_per_session() -> None:
    """Let every app of the session share the URL builders and compiled templates."""
    Rule._compile_builder = _cached_compile_builder  # type: ignore[method-assign]
    Quart.jinja_options = {**Quart.jinja_options, "bytecode_cache": SessionTemplates()}
