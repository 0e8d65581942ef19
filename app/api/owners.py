"""Management API resources that belong either to an application or to an organization (webhook
endpoints, saved replies): each handler is served under both, with its own endpoint name."""

from __future__ import annotations

from collections.abc import Callable

from quart import Blueprint

from app.api.auth import Handler

OWNER_PREFIXES = (
    ("/applications/<application_id>", "application"),
    ("/organizations/<organization_id>", "organization"),
)


def routes_under_both_owners(
    blueprint: Blueprint, segment: str
) -> Callable[[str, str], Callable[[Handler], Handler]]:
    """The ``route(rule, method)`` decorator of such a module: the handler is served at
    ``/applications/<application_id>`` + segment + rule and at the same under organizations, as
    ``application_<handler name>`` and ``organization_<handler name>``."""

    def route(rule: str, method: str) -> Callable[[Handler], Handler]:
        def register(handler: Handler) -> Handler:
            for prefix, owner in OWNER_PREFIXES:
                blueprint.add_url_rule(
                    prefix + segment + rule, f"{owner}_{handler.__name__}", handler, methods=[method]
                )
            return handler

        return register

    return route
