"""Who is calling: the client's address, read through the reverse proxies the operator trusts.

Behind a reverse proxy every request comes from the proxy's address, so per-address limits
would put every user in one bucket. The proxy tells the client's address in
``X-Forwarded-For`` (or the standard ``Forwarded``), but anyone can send those headers: they
are read only when the peer is listed in ``EARFUL_TRUSTED_PROXIES``, and only as far back as
the chain of trusted proxies goes. Walking the chain from the right, the first address that is
not a trusted proxy is the client; what lies to its left was written by the client itself.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Sequence

from quart import current_app, request

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address

_FORWARDED_FOR = re.compile(r'(?:^|[;,\s])for\s*=\s*(?:"([^"]*)"|([^;,\s]*))', re.IGNORECASE)


def parse_networks(text: str) -> tuple[Network, ...]:
    """``EARFUL_TRUSTED_PROXIES``: addresses or networks separated by commas or spaces.

    ``ValueError`` names the entry that is neither.
    """
    networks = []
    for entry in re.split(r"[,\s]+", text.strip()):
        if not entry:
            continue
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            raise ValueError(f"EARFUL_TRUSTED_PROXIES: {entry!r} is not an IP address or network") from None
    return tuple(networks)


def _address(text: str) -> Address | None:
    """One hop of a forwarding header: ``1.2.3.4``, ``1.2.3.4:80``, ``[::1]:80`` or ``::1``."""
    text = text.strip().strip('"')
    if text.startswith("["):
        text = text[1:].split("]", 1)[0]
    elif text.count(":") == 1:
        text = text.split(":", 1)[0]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _hops(forwarded: Sequence[str], forwarded_for: Sequence[str]) -> list[str]:
    """The addresses the proxies reported, oldest first: ``Forwarded`` when sent, else
    ``X-Forwarded-For`` (every instance of the header, in order)."""
    if forwarded:
        return [quoted or bare for value in forwarded for quoted, bare in _FORWARDED_FOR.findall(value)]
    return [hop for value in forwarded_for for hop in value.split(",") if hop.strip()]


def _is_trusted(address: Address, trusted: Iterable[Network]) -> bool:
    return any(address.version == network.version and address in network for network in trusted)


def resolve_client_address(
    peer: str, forwarded: Sequence[str], forwarded_for: Sequence[str], trusted: Sequence[Network]
) -> str:
    """The client's address, given the peer's and the forwarding headers."""
    current = _address(peer)
    if current is None or not trusted or not _is_trusted(current, trusted):
        return peer
    for hop in reversed(_hops(forwarded, forwarded_for)):
        address = _address(hop)
        if address is None:
            break  # a trusted proxy wrote something that is not an address: go no further
        current = address
        if not _is_trusted(address, trusted):
            break
    return str(current)


def client_address() -> str:
    """The address of the client of the current request (see the module's docstring)."""
    trusted = current_app.config["EARFUL"].trusted_proxies
    peer = request.remote_addr or ""
    if not trusted:
        return peer
    return resolve_client_address(
        peer, request.headers.getlist("Forwarded"), request.headers.getlist("X-Forwarded-For"), trusted
    )
