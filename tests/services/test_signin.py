"""Sign-in throttling: attempts are taken atomically before the check; guessers are slowed or
stopped, the owner of the account and everyone else are not locked out."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from app.models import SignInThrottle
from app.services import signin, users
from app.services.signin import TooManyAttempts, admit_attempt, sign_in
from tests.factories import PASSWORD, make_user

OFFICE = "198.51.100.10"
ATTACKER = "203.0.113.66"


@pytest.fixture
def checks(monkeypatch) -> list[str]:
    """The password hashes verified (argon2 runs for each): a spy around the real check."""
    seen: list[str] = []
    real = users.verify_password

    def counting(password_hash: str, password: str) -> bool:
        seen.append(password_hash)
        return real(password_hash, password)

    monkeypatch.setattr(users, "verify_password", counting)
    return seen


async def attempt(email: str, password: str, address: str) -> str:
    """Sign in and tell how it went: ok, wrong or throttled."""
    try:
        await sign_in(email, password, address)
    except TooManyAttempts:
        return "throttled"
    except Exception:
        return "wrong"
    return "ok"


async def test_forty_parallel_attempts_check_at_most_the_limit(db, checks):
    user = await make_user()

    outcomes = await asyncio.gather(*(attempt(user.email, f"guess {n}", ATTACKER) for n in range(40)))

    assert len(checks) <= signin.PAIR.limit
    assert outcomes.count("wrong") == len(checks)
    assert await attempt(user.email, PASSWORD, ATTACKER) == "throttled"


async def test_the_right_password_in_a_parallel_burst_does_not_get_through(db):
    user = await make_user()
    guesses = [f"guess {n}" for n in range(39)]
    guesses.insert(20, PASSWORD)

    outcomes = await asyncio.gather(*(attempt(user.email, guess, ATTACKER) for guess in guesses))

    assert outcomes.count("ok") + outcomes.count("wrong") <= signin.PAIR.limit


async def test_a_guesser_does_not_lock_the_owner_out_from_another_address(db):
    user = await make_user(email="admin@earful.local")
    for number in range(8):
        await attempt(user.email, f"guess {number}", ATTACKER)

    assert await attempt(user.email, "guess 9", ATTACKER) == "throttled"
    assert await attempt(user.email, PASSWORD, OFFICE) == "ok"


async def test_one_address_spraying_many_accounts_is_stopped(db):
    for number in range(signin.ADDRESS.limit):
        assert await attempt(f"someone{number}@example.com", "guess", ATTACKER) == "wrong"

    assert await attempt("another@example.com", "guess", ATTACKER) == "throttled"
    assert await attempt("another@example.com", "guess", OFFICE) == "wrong"


async def test_an_account_under_attack_from_many_addresses_is_slowed_not_locked(db):
    user = await make_user()
    now = datetime.now(UTC)
    for number in range(signin.ACCOUNT.limit):
        await admit_attempt(user.email, f"192.0.2.{number}", now)

    with pytest.raises(TooManyAttempts) as refused:
        await admit_attempt(user.email, "192.0.2.200", now + timedelta(seconds=1))
    await admit_attempt(user.email, "192.0.2.201", now + timedelta(seconds=6))
    with pytest.raises(TooManyAttempts):
        await admit_attempt(user.email, "192.0.2.202", now + timedelta(seconds=7))
    await admit_attempt(user.email, OFFICE, now + timedelta(seconds=12))

    assert refused.value.retry_after == 5
    assert "Wait a few seconds" in str(refused.value)


async def test_a_refused_attempt_counts_nothing(db):
    user = await make_user()
    now = datetime.now(UTC)
    for _ in range(signin.PAIR.limit):
        await admit_attempt(user.email, ATTACKER, now)
    address_row = await SignInThrottle.get(key=signin._key(signin.ADDRESS, ATTACKER))

    for _ in range(3):
        with pytest.raises(TooManyAttempts):
            await admit_attempt(user.email, ATTACKER, now)

    assert (await SignInThrottle.get(id=address_row.id)).admitted == address_row.admitted


async def test_the_window_ends_after_fifteen_minutes(db):
    user = await make_user()
    now = datetime.now(UTC)
    for _ in range(signin.PAIR.limit):
        await admit_attempt(user.email, ATTACKER, now)
    with pytest.raises(TooManyAttempts) as refused:
        await admit_attempt(user.email, ATTACKER, now + timedelta(minutes=14))

    await admit_attempt(user.email, ATTACKER, now + timedelta(minutes=16))

    assert refused.value.retry_after == 900


async def test_a_successful_sign_in_gives_its_attempts_back(db):
    user = await make_user()
    for number in range(signin.PAIR.limit - 1):
        assert await attempt(user.email, f"typo {number}", OFFICE) == "wrong"
    assert await attempt(user.email, PASSWORD, OFFICE) == "ok"

    for number in range(signin.PAIR.limit - 1):
        assert await attempt(user.email, f"typo {number}", OFFICE) == "wrong"
    assert await attempt(user.email, PASSWORD, OFFICE) == "ok"


async def test_throttles_keep_neither_addresses_nor_e_mails(db):
    await attempt("ann@example.com", "guess", ATTACKER)

    keys = await SignInThrottle.all().values_list("key", flat=True)

    assert len(keys) == 3
    assert all("ann" not in key and "203.0.113" not in key for key in keys)


async def test_an_unknown_address_costs_a_password_check_like_a_known_one(db, checks):
    user = await make_user()

    await attempt("nobody@example.com", "guess", OFFICE)
    await attempt(user.email, "guess", OFFICE)

    assert len(checks) == 2
    assert checks[0] != user.password_hash
