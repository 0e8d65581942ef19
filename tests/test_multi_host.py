"""Two app hosts behind one load balancer: two ``earful serve`` processes on different ports, each
with a data dir of its own, sharing one PostgreSQL database, one Redis and one S3 server (moto on
loopback). A file uploaded through one downloads through the other, a key rotated on one is
refused by the other at once (not after the capture cache's two seconds), and the capture rate
limit is one budget for both. While both run their background workers, one reply is e-mailed
once and delivered to a webhook once; and /readyz says so on both when the database goes away,
and again when it comes back. About 20 s a test on an idle machine, mostly the servers starting.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
import uuid
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

import httpx
import pytest

from app.config import CaptureLimits
from app.services.capture_limits import CaptureLimiter
from app.services.invalidation import CACHE_SECONDS
from tests.browser.live import LiveSite, live_site
from tests.conftest import create_postgres_database, drop_postgres_database
from tests.s3_fixtures import BUCKET, S3Server, new_prefix
from tests.smtp_relay import Relay
from tests.tcp_proxy import TcpProxy
from tests.webhook_receiver import Receiver

T = TypeVar("T")

REDIS_URL = "redis://127.0.0.1:6379/13"
PASSWORD = "a long password 1"
NOTES = b"steps to reproduce\n\x00\xff"


@pytest.fixture
def shared(s3_server: S3Server) -> Iterator[dict[str, str]]:
    """The settings both hosts share: a new PostgreSQL database, a Redis prefix, a bucket prefix
    and a secret key (the Redis keys and the database go afterwards)."""
    database_url = asyncio.run(create_postgres_database("earful_hosts"))
    prefix = f"earful-test-{uuid.uuid4().hex}"
    try:
        yield {
            "EARFUL_DATABASE_URL": database_url,
            "EARFUL_REDIS_URL": REDIS_URL,
            "EARFUL_REDIS_KEY_PREFIX": prefix,
            "EARFUL_STORAGE_URL": f"s3://{BUCKET}/{new_prefix()}",
            "EARFUL_SECRET_KEY": "a secret both hosts share",
            **s3_server.environment(),
        }
    finally:
        asyncio.run(_forget_redis_keys(prefix))
        asyncio.run(drop_postgres_database(database_url))


async def _forget_redis_keys(prefix: str) -> None:
    cleaner = CaptureLimiter(CaptureLimits(), REDIS_URL, prefix)
    await cleaner.storage.reset()
    await cleaner.close()


def _submit(site: LiveSite, application: dict, key: str, **body: object) -> httpx.Response:
    return site.http.post(
        f"{site.base_url}/applications/{application['id']}/submit",
        params={"key": key},
        json={"email": "customer@example.org", "message": "Two hosts, one inbox?", **body},
    )


def _csrf(site: LiveSite, path: str) -> str:
    page = site.http.get(f"{site.base_url}{path}").text
    match = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert match, f"no CSRF token on {path}"
    return match.group(1)


def _sign_in(site: LiveSite, email: str) -> None:
    """Sign in to the web app, as the application's owner would."""
    signed_in = site.http.post(
        f"{site.base_url}/app/login",
        data={"email": email, "password": PASSWORD, "csrf_token": _csrf(site, "/app/login")},
    )
    assert signed_in.status_code == 302, signed_in.text


def _rotate_api_key(site: LiveSite, application: dict) -> None:
    """Rotate the application's api key in the web app (signed in)."""
    page = f"/app/applications/{application['id']}"
    rotated = site.http.post(f"{site.base_url}{page}/keys/api/rotate", data={"csrf_token": _csrf(site, page)})
    assert rotated.status_code < 400, rotated.text


def _uploaded_and_downloaded(one: LiveSite, two: LiveSite, token: str, application: dict) -> None:
    upload = one.upload(application, "notes.txt", NOTES, "text/plain")
    assert _submit(one, application, application["keys"]["api"], attachments=[upload]).status_code == 201
    (thread,) = two.api_get(token, f"/applications/{application['id']}/feedback")["data"]
    (attachment,) = thread["attachments"]
    path = urlsplit(attachment["url"]).path

    downloaded = two.http.get(f"{two.base_url}{path}")

    assert downloaded.status_code == 200
    assert downloaded.content == NOTES
    assert downloaded.headers["Content-Type"].startswith("text/plain")
    assert downloaded.headers["X-Content-Type-Options"] == "nosniff"
    assert "sandbox" in downloaded.headers["Content-Security-Policy"]
    assert downloaded.headers["Content-Disposition"].startswith("attachment")
    prefix, attachment_id, secret, name = path.rsplit("/", 3)
    forged = two.http.get(f"{two.base_url}{prefix}/{attachment_id}/{'0' * len(secret)}/{name}")
    assert forged.status_code == 404


def _rotated_and_refused(one: LiveSite, two: LiveSite, application: dict) -> float:
    """Rotate the api key on one while two holds the application in its cache; how long two
    went on taking the old key."""
    old_key = application["keys"]["api"]
    _sign_in(one, "owner@example.com")
    assert _submit(two, application, old_key).status_code == 201  # two caches the application
    _rotate_api_key(one, application)
    rotated_at = time.monotonic()
    while (status := _submit(two, application, old_key).status_code) == 201:
        assert time.monotonic() - rotated_at < CACHE_SECONDS, "two took the old key until its cache expired"
    assert status == 403
    return time.monotonic() - rotated_at


def _shared_budget(one: LiveSite, two: LiveSite, application: dict) -> list[int]:
    """Six submits from one address, alternately through each host, to an application that takes
    three a minute; their statuses."""
    key = application["keys"]["api"]
    return [_submit((one, two)[number % 2], application, key).status_code for number in range(6)]


def test_two_hosts_share_files_keys_and_rate_limits(tmp_path: Path, shared: dict[str, str]):
    with live_site(tmp_path / "one", **shared) as one:
        token = one.create_agent("owner@example.com", "Owner", PASSWORD)
        files = one.create_application(token, name="Files", uploads_enabled="true")
        limited = one.create_application(token, name="Limited", submits_per_minute="3")
        with live_site(tmp_path / "two", **shared) as two:
            _uploaded_and_downloaded(one, two, token, files)
            went_on = _rotated_and_refused(one, two, files)
            statuses = _shared_budget(one, two, limited)
            new_key = two.api_get(token, f"/applications/{files['id']}")["data"]["keys"]["api"]
            assert _submit(two, files, new_key).status_code == 201

    assert went_on < 0.5  # at once: well under the cache's two seconds
    assert sorted(statuses) == [201, 201, 201, 429, 429, 429]
    for host in ("one", "two"):  # the files live in the bucket, on neither host's disk
        assert not (tmp_path / host / "uploads").exists()


# Background work on both hosts, and readiness ---------------------------------------------------


class BackgroundLoop:
    """An event loop in a thread of its own, for the loopback servers a synchronous test needs
    beside two live hosts: the SMTP relay, the webhook receiver, the database's proxy."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(work, self.loop).result(timeout=30)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=10)
        self.loop.close()


async def _started_receiver() -> Receiver:
    receiver = Receiver()
    await receiver.start()
    return receiver


async def _started_relay() -> Relay:
    relay = Relay()
    await relay.start()
    return relay


def _wait_until(condition: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"{what} within {seconds} s"
        time.sleep(0.1)


def _readiness(site: LiveSite) -> int:
    return site.http.get(f"{site.base_url}/readyz").status_code


def test_two_hosts_running_workers_send_each_reply_once_and_tell_when_the_database_is_away(
    tmp_path: Path, shared: dict[str, str]
):
    background = BackgroundLoop()
    proxy = TcpProxy.for_url(shared["EARFUL_DATABASE_URL"])
    relay, receiver = background.run(_started_relay()), background.run(_started_receiver())
    try:
        background.run(proxy.start())
        settings = {
            **shared,
            "EARFUL_DATABASE_URL": proxy.url(shared["EARFUL_DATABASE_URL"]),
            "EARFUL_SMTP_URL": f"smtp://127.0.0.1:{relay.port}",
            "EARFUL_WEBHOOK_ALLOW_PRIVATE": "1",
        }
        with live_site(tmp_path / "one", **settings) as one, live_site(tmp_path / "two", **settings) as two:
            token = one.create_agent("owner@example.com", "Owner", PASSWORD)
            application = one.create_application(token, name="Shop")
            hooked = one.http.post(
                f"{one.base_url}/applications/{application['id']}/webhooks",
                headers={"Authorization": f"Bearer {token}"},
                json={"url": receiver.url, "events": ["reply.created"]},
            )
            assert hooked.status_code == 201, hooked.text
            assert _submit(one, application, application["keys"]["api"]).status_code == 201
            (thread,) = two.api_get(token, f"/applications/{application['id']}/feedback")["data"]
            two.reply(token, application["id"], thread["id"], "Both hosts run workers; you get this once.")

            _wait_until(lambda: len(relay.envelopes) >= 1 and len(receiver.received) >= 1, 30, "delivered")
            time.sleep(3)  # both workers poll meanwhile: a second copy would arrive now
            mails = [m for m in relay.messages if m["To"].addresses[0].addr_spec == "customer@example.org"]
            assert len(mails) == 1
            assert len(receiver.received) == 1
            assert json.loads(receiver.received[0].body)["type"] == "reply.created"

            assert (_readiness(one), _readiness(two)) == (200, 200)
            background.run(proxy.cut())
            _wait_until(lambda: _readiness(one) == 503 and _readiness(two) == 503, 30, "not ready")
            background.run(proxy.restore())
            _wait_until(lambda: _readiness(one) == 200 and _readiness(two) == 200, 30, "ready again")
    finally:
        for stopping in (proxy.cut(), relay.stop(), receiver.stop()):
            background.run(stopping)
        background.close()
