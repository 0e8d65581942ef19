"""HTML pages rendered by Jinja in its plain (synchronous) mode.

Quart compiles templates for asynchronous rendering, where every expression and every call a
template makes goes through an awaitable check. No template here awaits anything (the context
processors, which may, run before rendering), and rendering the same templates plainly, through
an overlay of Quart's environment (same loader, filters, globals and extensions), spares those
checks with byte-identical output (benchmarks/notes.md has the measurement).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from flask.templating import _default_template_ctx_processor as flask_default_context
from jinja2 import Environment
from jinja2.filters import do_truncate
from markupsafe import Markup
from quart import Quart, current_app, request

TEMPLATE_CACHE_SIZE = 400


def plain_environment(app: Quart) -> Environment:
    """The app's Jinja environment without async mode, made once; its own cache, so that it never
    holds a template compiled for the async environment."""
    environment = app.extensions.get("plain_jinja")
    if environment is None:
        environment = app.jinja_env.overlay(enable_async=False, cache_size=TEMPLATE_CACHE_SIZE)
        app.extensions["plain_jinja"] = environment
    return environment


def keep_context_processors_on_the_loop(app: Quart) -> None:
    """Drop the copies of Flask's default context processor that every blueprint carries.

    Quart gives the app its own default processor (``g``, ``request`` and ``session``, as a
    coroutine), but each blueprint registers Flask's, a plain function that puts the same three
    names in the context, and Quart runs a plain processor in its thread pool: a page of
    ``views.inbox`` handed work to a thread and waited for it twice per render, for nothing the
    app's own processor had not given. Call once every blueprint is registered."""
    for blueprint, processors in app.template_context_processors.items():
        if blueprint is not None:
            processors[:] = [processor for processor in processors if processor is not flask_default_context]


async def render_template(template_name: str, **context: Any) -> str:
    """Quart's ``render_template`` (context processors included), rendered plainly."""
    app: Quart = current_app._get_current_object()  # type: ignore[attr-defined]  # LocalProxy's
    await app.update_template_context(context)
    return plain_environment(app).get_template(template_name).render(context)


def template_macro(template_name: str, macro: str) -> Callable[..., Markup]:
    """A macro of a template, to call from Python (rendered plainly, like the pages)."""
    app: Quart = current_app._get_current_object()  # type: ignore[attr-defined]  # LocalProxy's
    found: Callable[..., Markup] = getattr(plain_environment(app).get_template(template_name).module, macro)
    return found


def truncator() -> Callable[..., str]:
    """Jinja's ``truncate`` filter, to call from Python with the templates' environment (its
    leeway policy), so that text cut before rendering is cut as a template would cut it."""
    app: Quart = current_app._get_current_object()  # type: ignore[attr-defined]  # LocalProxy's
    return functools.partial(do_truncate, plain_environment(app))


def characters_truncate_reads(length: int) -> int:
    """How many of a text's first characters Jinja's ``truncate`` at ``length`` looks at (with
    the templates' leeway policy): cut from those alone, any text comes out as it does cut
    whole, so a page need not read more of a long message than that."""
    app: Quart = current_app._get_current_object()  # type: ignore[attr-defined]  # LocalProxy's
    return length + int(plain_environment(app).policies["truncate.leeway"]) + 1


def mailto_url(address: str) -> str:
    """A ``mailto:`` link to one address, percent-encoded (RFC 6068).

    Addresses may legally hold ``?``, ``&`` and ``%``; left as they are, an address like
    ``a?cc=x%40evil.test&b=@c.test`` opens a mail with an extra Cc.
    """
    return "mailto:" + quote(address, safe="@")


def is_htmx() -> bool:
    """Whether htmx sent the request (it answers with a fragment instead of a page)."""
    return bool(request.headers.get("HX-Request"))
