"""Fixtures of the webhook tests: settings that let deliveries reach loopback, a receiver."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator

import pytest

from app.config import Settings
from app.services.deployment import use_settings
from app.services.webhooks.delivery import Sender
from tests.webhook_receiver import Receiver, running_receiver


@pytest.fixture
def hook_settings(settings: Settings) -> Settings:
    """The test settings with EARFUL_WEBHOOK_ALLOW_PRIVATE=1 (the receiver is on loopback)."""
    changed = dataclasses.replace(settings, webhook_allow_private=True)
    use_settings(changed)
    return changed


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
