"""Secrets: argon2id hashes, digests, random tokens and constant-time comparison."""

from __future__ import annotations

from argon2 import Parameters, extract_parameters
from argon2.profiles import RFC_9106_LOW_MEMORY

from app.services.security import (
    hash_password,
    random_password,
    random_token,
    secrets_match,
    sha256_hex,
    verify_password,
)


def test_a_password_hash_is_argon2id_and_verifies_only_its_password():
    hashed = hash_password("correct horse")

    assert hashed.startswith("$argon2id$")
    assert verify_password(hashed, "correct horse")
    assert not verify_password(hashed, "wrong horse")


def test_a_password_hash_costs_what_argon2_cffi_recommends():
    """The factories' users carry a cheap hash (tests/factories.py); the app's own never does."""
    cost: Parameters = extract_parameters(hash_password("correct horse"))

    assert (cost.time_cost, cost.memory_cost, cost.parallelism) == (
        RFC_9106_LOW_MEMORY.time_cost,
        RFC_9106_LOW_MEMORY.memory_cost,
        RFC_9106_LOW_MEMORY.parallelism,
    )


def test_a_broken_hash_verifies_nothing():
    assert not verify_password("not a hash", "anything")


def test_random_secrets_differ_and_are_long_enough():
    assert random_token() != random_token()
    assert len(random_token(24)) >= 32
    assert len(random_password()) >= 16


def test_digests_and_comparisons():
    assert sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert secrets_match("same", "same")
    assert not secrets_match("same", "other")
