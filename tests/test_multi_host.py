"""Two app hosts behind one load balancer: two ``earful serve`` processes on different ports, each
with a data dir of its own, sharing one PostgreSQL database, one Redis and one S3 server (moto on
loopback). A file uploaded through one downloads through the other, a key rotated on one is
refused by the other at once (not after the capture cache's two seconds), and the capture rate
limit is one budget for both. About 20 s on an idle machine, mostly the two servers starting.
"""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from app.config import CaptureLimits
from app.services.capture_limits import CaptureLimiter
from app.services.invalidation import CACHE_SECONDS
from tests.browser.live import LiveSite, live_site
from tests.conftest import create_postgres_database, drop_postgres_database
from tests.s3_fixtures import BUCKET, S3Server, new_prefix

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
