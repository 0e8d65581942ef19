"""The client's address behind reverse proxies: forwarding headers are believed only from
trusted peers, and only as far back as the chain of trusted proxies goes."""

from __future__ import annotations

import pytest

from app.config import load_settings
from app.proxies import parse_networks, resolve_client_address

TRUSTED = parse_networks("10.0.0.0/8, 127.0.0.1 ::1")


def resolve(peer: str, forwarded_for: list[str] | None = None, forwarded: list[str] | None = None) -> str:
    return resolve_client_address(peer, forwarded or [], forwarded_for or [], TRUSTED)


def test_without_trusted_proxies_the_peer_is_the_client():
    assert resolve_client_address("127.0.0.1", [], ["203.0.113.5"], ()) == "127.0.0.1"


def test_an_untrusted_peer_cannot_claim_another_address():
    assert resolve("198.51.100.7", ["203.0.113.5"]) == "198.51.100.7"


def test_a_trusted_peer_names_the_client():
    assert resolve("127.0.0.1", ["203.0.113.5"]) == "203.0.113.5"


def test_the_chain_is_walked_back_only_through_trusted_proxies():
    # The client wrote 6.6.6.6 itself; 203.0.113.5 connected to the first trusted proxy.
    assert resolve("127.0.0.1", ["6.6.6.6, 203.0.113.5, 10.1.2.3"]) == "203.0.113.5"


def test_repeated_headers_are_read_in_order():
    assert resolve("10.0.0.1", ["6.6.6.6", "203.0.113.5, 10.9.9.9"]) == "203.0.113.5"


def test_the_standard_forwarded_header_is_read_first():
    forwarded = ['for=6.6.6.6, for="[2001:db8::7]:4711";proto=https, for=10.0.0.2']
    assert resolve("::1", ["198.51.100.1"], forwarded) == "2001:db8::7"


def test_a_garbled_hop_stops_the_walk_at_the_last_trusted_proxy():
    assert resolve("127.0.0.1", ["203.0.113.5, garbage"]) == "127.0.0.1"


def test_only_trusted_proxies_in_the_chain_gives_the_first_of_them():
    assert resolve("127.0.0.1", ["10.0.0.9, 10.0.0.8"]) == "10.0.0.9"


def test_a_port_on_a_hop_is_dropped():
    assert resolve("127.0.0.1", ["203.0.113.5:5555"]) == "203.0.113.5"


def test_a_bad_trusted_proxies_setting_names_the_entry(tmp_path):
    with pytest.raises(ValueError, match=r"'10\.0\.0\.300'"):
        load_settings({"EARFUL_DATA_DIR": str(tmp_path), "EARFUL_TRUSTED_PROXIES": "127.0.0.1,10.0.0.300"})
