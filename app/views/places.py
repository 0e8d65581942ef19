"""Pages of things that belong either to an application or to an organization (webhook
endpoints, saved replies): the place a route names, and routes registered under both."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from quart import Blueprint, url_for

from app.repositories.applications import ApplicationRow
from app.repositories.organizations import OrganizationRow

ScopeT = TypeVar("ScopeT")
Handler = TypeVar("Handler", bound=Callable[..., Any])

PREFIXES = ("/applications/<id:application_id>", "/organizations/<id:organization_id>")


@dataclass(frozen=True)
class Place(Generic[ScopeT]):
    """An application or an organization, as the pages of ``views`` (a blueprint's endpoint
    prefix, set by each subclass) show it, with the service's scope for it."""

    views: ClassVar[str]
    scope: ScopeT
    application: ApplicationRow | None = None
    organization: OrganizationRow | None = None

    @property
    def owner(self) -> dict[str, Any]:
        """The route values naming the place."""
        if self.application is not None:
            return {"application_id": self.application.id}
        assert self.organization is not None
        return {"organization_id": self.organization.id}

    def url(self, handler: str, **values: Any) -> str:
        """The address of one of the module's handlers, in this place."""
        return url_for(f"{self.views}.{handler}", **self.owner, **values)

    @property
    def name(self) -> str:
        if self.application is not None:
            return self.application.name
        assert self.organization is not None
        return self.organization.name


def routes_in_both_places(blueprint: Blueprint, segment: str) -> Callable[..., Callable[[Handler], Handler]]:
    """The ``route`` decorator of such a module: a handler registered under an application and
    under an organization (``/applications/{id}`` + segment + path, and the same for
    organizations), with one endpoint name."""

    def route(path: str, methods: tuple[str, ...] = ("GET",)) -> Callable[[Handler], Handler]:
        def register(handler: Handler) -> Handler:
            for prefix in PREFIXES:
                blueprint.add_url_rule(prefix + segment + path, view_func=handler, methods=list(methods))
            return handler

        return register

    return route
