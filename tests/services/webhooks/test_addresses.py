"""Webhooks go to public addresses only (no server-side request forgery)."""

from __future__ import annotations

import ipaddress

import pytest

from app.services.webhooks.addresses import ForbiddenAddress, GuardedResolver, check_url, forbidden


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",
        "224.0.0.1",
        "::1",
        "fe80::1",
        "fc00::1",
        "fd00:ec2::254",
        "::ffff:127.0.0.1",
        "100.100.100.200",
    ],
)
def test_private_loopback_link_local_and_metadata_addresses_are_forbidden(address):
    assert forbidden(ipaddress.ip_address(address))


@pytest.mark.parametrize("address", ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946", "1.1.1.1"])
def test_public_addresses_are_allowed(address):
    assert not forbidden(ipaddress.ip_address(address))


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/hooks",
        "http://localhost:8080/hooks",
        "https://[::1]/hooks",
        "http://169.254.169.254/latest/meta-data/",
        "http://2130706433/",  # 127.0.0.1 as one number
    ],
)
async def test_a_url_whose_host_is_or_resolves_to_a_private_address_is_refused(url):
    with pytest.raises(ForbiddenAddress, match=r"public addresses|could not be found"):
        await check_url(url, allow_private=False)


@pytest.mark.parametrize(
    "url",
    ["ftp://example.com/", "file:///etc/passwd", "gopher://127.0.0.1/", "http://user:pw@example.com/", "x"],
)
async def test_only_http_urls_without_credentials_are_taken(url):
    with pytest.raises(ForbiddenAddress, match="url field"):
        await check_url(url, allow_private=True)


async def test_an_unknown_host_is_refused():
    with pytest.raises(ForbiddenAddress, match="could not be found"):
        await check_url("https://no-such-host.invalid/hooks", allow_private=False)


async def test_private_addresses_pass_when_allowed():
    await check_url("http://localhost:8080/hooks", allow_private=True)


async def test_the_resolver_refuses_a_name_that_resolves_to_loopback():
    resolver = GuardedResolver(allow_private=False)
    try:
        with pytest.raises(ForbiddenAddress):
            await resolver.resolve("localhost", 80)
    finally:
        await resolver.close()
