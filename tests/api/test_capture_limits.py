"""Rate limits of the capture API through the test client (memory storage): 429 with
Retry-After, per address and per application, the ceiling, and the check order."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from io import BytesIO

import pytest
from werkzeug.datastructures import FileStorage

from app import create_app
from app.config import CaptureLimits
from app.proxies import parse_networks
from app.services.capture_limits import CaptureLimiter
from tests.api.test_capture import VALID, capture_path
from tests.browser.live import live_site
from tests.factories import body_text, make_application
from tests.openapi_check import CheckedClient

LIMITS = CaptureLimits(
    submits_per_minute=3, opens_per_minute=4, uploads_per_minute=2, submits_per_minute_total=5
)
TOO_MANY = {
    "en": "Too many requests, try again later",
    "es": "Demasiadas solicitudes, inténtalo de nuevo más tarde",
    "pt": "Muitas solicitações, tente novamente mais tarde",
}


@pytest.fixture
async def limited(settings):
    """A client of an app with low default limits, behind a trusted proxy so that each test
    chooses the caller's address with X-Forwarded-For."""
    app = create_app(
        dataclasses.replace(settings, capture_limits=LIMITS, trusted_proxies=parse_networks("127.0.0.0/8")),
        manage_db=False,
    )
    app.test_client_class = CheckedClient
    async with app.test_app():
        client = app.test_client()
        yield client
    assert not client.violations.found, "answers that break /openapi.json:\n" + "\n".join(
        client.violations.found
    )


async def _submit(client, application, address="192.0.2.1", **query):
    return await client.post(
        capture_path(application.id, "submit", application.key_api, **query),
        json=VALID,
        headers={"X-Forwarded-For": address},
        scope_base={"client": ("127.0.0.1", 50000)},
    )


@pytest.mark.parametrize("language", ["en", "es", "pt"])
async def test_a_burst_from_one_address_gets_429_with_retry_after_while_another_address_is_served(
    limited, agent, language
):
    application = await make_application(agent)
    statuses = [(await _submit(limited, application, language=language)).status_code for _ in range(6)]
    assert statuses == [201, 201, 201, 429, 429, 429]

    refused = await _submit(limited, application, language=language)
    assert refused.status_code == 429
    assert await body_text(refused) == TOO_MANY[language]
    assert refused.mimetype == "text/plain"
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    assert refused.headers["Access-Control-Allow-Origin"] == "*"

    assert (await _submit(limited, application, address="198.51.100.9")).status_code == 201


async def test_a_limited_address_still_reaches_other_applications(limited, agent):
    first, second = await make_application(agent), await make_application(agent)
    for _ in range(3):
        await _submit(limited, first)
    assert (await _submit(limited, first)).status_code == 429
    assert (await _submit(limited, second)).status_code == 201


async def test_an_application_sets_its_own_limit(limited, agent):
    application = await make_application(agent, submits_per_minute=1)
    assert [(await _submit(limited, application)).status_code for _ in range(2)] == [201, 429]


async def test_the_ceiling_bounds_all_addresses_together(limited, agent):
    application = await make_application(agent)
    statuses = [
        (await _submit(limited, application, address=f"192.0.2.{n}")).status_code for n in range(1, 8)
    ]
    assert statuses == [201] * 5 + [429] * 2


@pytest.mark.parametrize(("action", "limit"), [("open", 4), ("upload", 2)])
async def test_opens_and_uploads_have_their_own_limits(limited, agent, action, limit):
    application = await make_application(agent)
    path = capture_path(application.id, action, application.key_javascript)
    statuses = []
    for _ in range(limit + 1):
        files = _files() if action == "upload" else None
        response = await limited.post(path, files=files, scope_base={"client": ("127.0.0.1", 50000)})
        statuses.append(response.status_code)
    assert statuses[-1] == 429
    assert statuses[:-1] == [201] * limit
    # A submit from the same address is counted apart.
    assert (await _submit(limited, application, address="127.0.0.1")).status_code == 201


def _files():
    return {"file": FileStorage(BytesIO(b"steps to reproduce"), filename="a.txt")}


async def test_a_wrong_key_or_a_switched_off_application_is_refused_before_the_limit(limited, agent):
    application = await make_application(agent, submits_per_minute=1)
    await _submit(limited, application)
    wrong = await limited.post(capture_path(application.id, "submit", "wrong"), json=VALID)
    assert wrong.status_code == 403
    off = await make_application(agent, submits_per_minute=1, capture_enabled=False)
    for _ in range(3):
        assert (await _submit(limited, off)).status_code == 403


async def test_the_limit_is_checked_before_the_body(limited, agent):
    application = await make_application(agent, submits_per_minute=1)
    await _submit(limited, application)
    response = await limited.post(
        capture_path(application.id, "submit", application.key_api),
        data="not json",
        headers={"X-Forwarded-For": "192.0.2.1"},
        scope_base={"client": ("127.0.0.1", 50000)},
    )
    assert response.status_code == 429


# --- two live servers -----------------------------------------------------------------------

REDIS_URL = "redis://127.0.0.1:6379/13"


def _submits_through_two_servers(data_dir, count: int, **env: str) -> list[int]:
    """Start two ``earful serve`` on one database, make an application allowing 5 submits a
    minute per address, and send ``count`` submits alternately to each; their statuses."""
    with live_site(data_dir, **env) as one:
        token = one.create_agent("owner@example.com", "Owner", "a long password 1")
        application = one.create_application(token, name="Shared", submits_per_minute="5")
        with live_site(data_dir, **env) as two:
            statuses = []
            for number in range(count):
                site = (one, two)[number % 2]
                response = site.http.post(
                    f"{site.base_url}/applications/{application['id']}/submit",
                    params={"key": application["keys"]["api"]},
                    json={"email": f"c{number}@example.org", "message": "Rate limited?"},
                )
                if response.status_code == 429:
                    assert int(response.headers["Retry-After"]) >= 1
                statuses.append(response.status_code)
    return statuses


async def test_two_servers_sharing_redis_share_one_budget(tmp_path):
    prefix = f"earful-test-{uuid.uuid4().hex}"
    try:
        statuses = await asyncio.to_thread(
            _submits_through_two_servers,
            tmp_path / "data",
            12,
            EARFUL_REDIS_URL=REDIS_URL,
            EARFUL_REDIS_KEY_PREFIX=prefix,
        )
    finally:
        cleaner = CaptureLimiter(LIMITS, REDIS_URL, prefix)
        await cleaner.storage.reset()
        await cleaner.close()
    assert statuses.count(201) == 5
    assert statuses.count(429) == 7


async def test_two_servers_on_memory_storage_each_keep_their_own_budget(tmp_path):
    statuses = await asyncio.to_thread(_submits_through_two_servers, tmp_path / "data", 12)
    assert statuses.count(201) == 10
