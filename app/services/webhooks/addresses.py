"""Where a webhook may be sent: no server-side request forgery.

A webhook URL is typed by a user and fetched by the server, so it could name the server's own
loopback, the private network behind it, or a cloud's metadata service (169.254.169.254), and
turn Earful into a proxy into places its users cannot reach. Only http(s) URLs are accepted,
and every address the host resolves to must be public: checked when the endpoint is saved, and
again at every delivery on the addresses the connection actually uses (:class:`GuardedResolver`
hands aiohttp only checked addresses, so a name that resolves elsewhere the second time, DNS
rebinding, gains nothing). ``EARFUL_WEBHOOK_ALLOW_PRIVATE=1`` lifts the address rule for tests
and intranet installs; the scheme rule stays.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import DefaultResolver

from app.services.validation import is_http_url

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

# Metadata services that is_global does not already exclude (AWS's IPv6 one, Alibaba's).
METADATA = (ipaddress.ip_network("fd00:ec2::254/128"), ipaddress.ip_network("100.100.100.200/32"))


class ForbiddenAddress(Exception):
    """The URL names a place a webhook may not go; the text says why, for the user."""


def forbidden(address: Address) -> bool:
    """Loopback, private, link-local, shared, reserved, multicast and metadata addresses."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return forbidden(address.ipv4_mapped)
    return not address.is_global or address.is_multicast or any(address in network for network in METADATA)


def check_address(address: str, allow_private: bool) -> None:
    """Refuse one resolved address (a text IP) unless it is public or private ones are allowed."""
    if allow_private:
        return
    try:
        parsed = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        raise ForbiddenAddress(f"{address} is not an IP address") from None
    if forbidden(parsed):
        raise ForbiddenAddress(
            f"The URL's host resolves to {parsed}, a private, loopback or link-local address: "
            "webhooks only go to public addresses"
        )


def check_url_form(url: str) -> str:
    """An http(s) URL with a host and no credentials; its host (ForbiddenAddress otherwise)."""
    if not is_http_url(url):
        raise ForbiddenAddress("The url field must be an http:// or https:// URL")
    parts = urlsplit(url)
    if parts.username is not None or parts.password is not None:
        raise ForbiddenAddress("The url field must not hold a user name or a password")
    try:
        port = parts.port
    except ValueError:  # not a number, or over 65535: urlsplit raises only when asked
        port = 0
    if port == 0:
        raise ForbiddenAddress("The url field must have a port from 1 to 65535")
    assert parts.hostname is not None  # is_http_url checked it
    return parts.hostname


def _literal(host: str) -> str | None:
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return None


async def resolve(host: str, port: int) -> list[str]:
    """The addresses of a host name (TCP); ForbiddenAddress when it has none."""
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise ForbiddenAddress(f"The URL's host {host!r} could not be found") from None
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


async def check_url(url: str, allow_private: bool) -> None:
    """Check a webhook URL as it is saved: its form, and every address its host has now."""
    host = check_url_form(url)
    literal = _literal(host)
    if literal is not None:
        check_address(literal, allow_private)
        return
    port = urlsplit(url).port or (443 if url.startswith("https:") else 80)
    for address in await resolve(host, port):
        check_address(address, allow_private)


@lru_cache(maxsize=4096)
def check_literal_target(url: str, allow_private: bool) -> None:
    """At send time, a URL whose host is an IP literal (aiohttp does not resolve those).

    Every delivery asks, and the answer depends on nothing but the arguments: a URL that passed
    is remembered (a refusal raises, which is never cached, and is worked out again)."""
    host = check_url_form(url)
    literal = _literal(host)
    if literal is not None:
        check_address(literal, allow_private)


class GuardedResolver(AbstractResolver):
    """aiohttp's resolver, refusing host names with any forbidden address."""

    def __init__(self, allow_private: bool) -> None:
        self.allow_private = allow_private
        self._resolver = DefaultResolver()

    async def resolve(self, host: str, port: int = 0, family: Any = socket.AF_INET) -> list[ResolveResult]:
        found = await self._resolver.resolve(host, port, family)
        for result in found:
            check_address(str(result["host"]), self.allow_private)
        return found

    async def close(self) -> None:
        await self._resolver.close()
