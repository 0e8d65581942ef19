"""Fixtures of the webhook tests: a receiver on loopback."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from app.config import Settings
from app.services.webhooks.delivery import Sender
from tests.webhook_receiver import Receiver, running_receiver


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    async with running_receiver() as running:
        yield running


@pytest.fixture
async def sender_for_release(hook_settings: Settings) -> AsyncIterator[Sender]:
    """A delivery worker's HTTP client, closed after the test."""
    sending = Sender(allow_private=True, timeout=2.0)
    yield sending
    await sending.close()
