"""The capture API's rate limiter: per address, per application, overrides, the ceiling,
Redis storage and failing open."""

from __future__ import annotations

import logging
import uuid

import pytest

from app.config import CaptureLimits
from app.errors import TooManyRequests
from app.services.capture_limits import CaptureLimiter
from tests.factories import make_application, make_user

LIMITS = CaptureLimits(
    submits_per_minute=2, opens_per_minute=3, uploads_per_minute=1, submits_per_minute_total=4
)
REDIS_URL = "redis://127.0.0.1:6379/13"


async def _accepted(limiter, application, action, address, times):
    accepted = 0
    for _ in range(times):
        try:
            await limiter.check(application, action, address)
            accepted += 1
        except TooManyRequests as refused:
            assert 1 <= refused.retry_after <= 60
            assert refused.status == 429
    return accepted


@pytest.fixture
async def owner(db):
    return await make_user()


async def test_each_action_has_its_default_limit_per_address(owner):
    limiter, application = CaptureLimiter(LIMITS), await make_application(owner)
    assert await _accepted(limiter, application, "submit", "192.0.2.1", 5) == 2
    assert await _accepted(limiter, application, "open", "192.0.2.1", 5) == 3
    assert await _accepted(limiter, application, "upload", "192.0.2.1", 5) == 1
    assert await _accepted(limiter, application, "submit", "192.0.2.2", 5) == 2


async def test_limits_are_scoped_to_the_application(owner):
    limiter = CaptureLimiter(LIMITS)
    first, second = await make_application(owner), await make_application(owner)
    assert await _accepted(limiter, first, "submit", "192.0.2.1", 3) == 2
    assert await _accepted(limiter, second, "submit", "192.0.2.1", 3) == 2


async def test_an_application_overrides_the_defaults(owner):
    limiter = CaptureLimiter(LIMITS)
    application = await make_application(owner, submits_per_minute=5, opens_per_minute=1)
    assert await _accepted(limiter, application, "submit", "192.0.2.1", 6) == 4  # the ceiling (4) first
    assert await _accepted(limiter, application, "open", "192.0.2.1", 3) == 1


async def test_the_ceiling_counts_submits_from_every_address(owner):
    limiter = CaptureLimiter(LIMITS)
    application = await make_application(owner, submits_per_minute_total=3)
    accepted = [await _accepted(limiter, application, "submit", f"192.0.2.{n}", 1) for n in range(1, 6)]
    assert accepted == [1, 1, 1, 0, 0]


async def test_a_refused_address_does_not_use_up_the_ceiling(owner):
    limiter = CaptureLimiter(LIMITS)
    application = await make_application(owner)
    assert await _accepted(limiter, application, "submit", "192.0.2.1", 10) == 2
    assert await _accepted(limiter, application, "submit", "192.0.2.2", 10) == 2


@pytest.fixture
async def redis_prefix():
    """A key prefix of this test alone in Redis database 13, whose keys are deleted afterwards."""
    prefix = f"earful-test-{uuid.uuid4().hex}"
    yield prefix
    cleaner = CaptureLimiter(LIMITS, REDIS_URL, prefix)
    await cleaner.storage.reset()  # deletes the keys under this prefix only
    await cleaner.close()


async def test_two_limiters_on_one_redis_share_the_budget(owner, redis_prefix):
    first = CaptureLimiter(LIMITS, REDIS_URL, redis_prefix)
    second = CaptureLimiter(LIMITS, REDIS_URL, redis_prefix)
    application = await make_application(owner)
    accepted = [
        await _accepted(limiter, application, "submit", "192.0.2.1", 1) for limiter in [first, second] * 3
    ]
    assert sum(accepted) == 2


async def test_redis_out_of_reach_lets_requests_through_and_logs_it_once(owner, caplog):
    limiter = CaptureLimiter(LIMITS, "redis://127.0.0.1:1/0", "unused")
    application = await make_application(owner)
    with caplog.at_level(logging.WARNING, logger="app.services.capture_limits"):
        assert await _accepted(limiter, application, "submit", "192.0.2.77", 5) == 5
    messages = [record.getMessage() for record in caplog.records]
    assert len(messages) == 1
    assert "rate limit storage unavailable" in messages[0]
    assert "192.0.2.77" not in messages[0]
