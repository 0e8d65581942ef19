"""A client generated from /openapi.json (openapi-python-client) works against a live server."""

from __future__ import annotations

import importlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import httpx
import pytest

from tests.browser.live import LiveSite, live_site

GENERATOR = Path(sys.executable).parent / "openapi-python-client"
PACKAGE = "earful_generated_client"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveSite]:
    with live_site(tmp_path_factory.mktemp("generated") / "data") as running:
        yield running


@pytest.fixture(scope="module")
def generated(site: LiveSite, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    """The client package, generated from the live server's own document."""
    folder = tmp_path_factory.mktemp("client")
    (folder / "openapi.json").write_bytes(httpx.get(f"{site.base_url}/openapi.json").content)
    subprocess.run(
        [str(GENERATOR), "generate", "--path", "openapi.json", "--meta", "none", "--output-path", PACKAGE],
        cwd=folder,
        check=True,
        capture_output=True,
        timeout=120,
    )
    sys.path.insert(0, str(folder))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(folder))
        for name in [name for name in sys.modules if name.startswith(PACKAGE)]:
            del sys.modules[name]


def test_generated_client_reads_threads_and_posts_a_reply(site: LiveSite, generated: ModuleType):
    token = site.create_agent("generated@example.com", "Gen Client", "generated-password-1")
    application = site.create_application(token, name="Generated")
    site.submit(application, email="pat@example.com", message="The CSV export misses the tags column")
    list_feedback = importlib.import_module(f"{PACKAGE}.api.management_api.list_feedback")
    create_reply = importlib.import_module(f"{PACKAGE}.api.management_api.create_reply")
    models = importlib.import_module(f"{PACKAGE}.models")
    client = generated.AuthenticatedClient(base_url=site.base_url, token=token)

    with client:
        listed = list_feedback.sync(application["id"], client=client)
        thread = listed.data[0]
        answered = create_reply.sync(
            application["id"],
            thread.id,
            client=client,
            body=models.CreateReplyBody(message="Fixed in 2.4, thanks!"),
        )

    assert listed.pagination.total == 1
    assert thread.message == "The CSV export misses the tags column"
    assert thread.sentiment.value in ("positive", "neutral", "negative")
    assert [reply.message for reply in answered.data.replies] == ["Fixed in 2.4, thanks!"]
    assert answered.data.replies[0].reply_from_agent is True


def test_generated_client_reads_a_documented_error(site: LiveSite, generated: ModuleType):
    get_feedback = importlib.import_module(f"{PACKAGE}.api.management_api.get_feedback")
    client = generated.AuthenticatedClient(base_url=site.base_url, token="not-a-token")

    with client:
        response = get_feedback.sync_detailed(1, 1, client=client)

    assert response.status_code == 401
    assert response.content == b"Unauthenticated"
