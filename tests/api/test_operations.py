"""GET /healthz, /readyz and /metrics: what load balancers and Prometheus call."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from prometheus_client import REGISTRY
from quart import Quart

from app import create_app
from app.config import Settings
from app.db import close_database, open_database
from app.services.monitoring import CHECK_TIMEOUT
from tests.factories import body_text
from tests.tcp_proxy import TcpProxy

METRICS_PORT = 9109  # a listener's port as the app sees it in the request's scope; nothing binds it


@asynccontextmanager
async def running(settings: Settings, **changes: object) -> AsyncIterator[Quart]:
    """An app of the test's database with other settings, serving (its hooks have run)."""
    application = create_app(dataclasses.replace(settings, **changes), manage_db=False)
    async with application.test_app():
        yield application


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


async def test_healthz_answers_ok_without_asking_the_database(client, queries):
    response = await client.get("/healthz")

    assert response.status_code == 200
    assert response.mimetype == "text/plain"
    assert await body_text(response) == "ok"
    assert queries.count == 0


async def test_readyz_answers_ok_when_the_database_is_migrated(client):
    response = await client.get("/readyz")

    assert response.status_code == 200
    assert await body_text(response) == "ok"


async def test_readyz_asks_redis_when_it_is_configured(settings):
    async with running(settings, redis_url="redis://127.0.0.1:6379/0") as application:
        response = await application.test_client().get("/readyz")

    assert response.status_code == 200


async def test_readyz_is_503_quickly_when_redis_does_not_answer(settings):
    async with running(settings, redis_url="redis://127.0.0.1:1/0") as application:
        started = time.monotonic()
        response = await application.test_client().get("/readyz")

    assert time.monotonic() - started < CHECK_TIMEOUT + 1
    assert response.status_code == 503
    assert response.mimetype == "text/plain"
    assert await body_text(response) == "redis: no answer to PING"


async def test_readyz_is_503_while_the_database_is_cut_and_recovers(settings, backend, orm):
    """PostgreSQL behind a TCP proxy in the test: closing the proxy cuts the app off its
    database (the server itself keeps serving the other tests), reopening it gives it back."""
    if backend != "postgres":
        pytest.skip("a database behind TCP: PostgreSQL")
    proxy = TcpProxy.for_url(orm)
    await proxy.start()
    await close_database()
    await open_database(proxy.url(orm))
    try:
        async with running(settings) as application:
            client = application.test_client()
            assert (await client.get("/readyz")).status_code == 200

            await proxy.cut()
            started = time.monotonic()
            cut = await client.get("/readyz")
            waited = time.monotonic() - started

            await proxy.restore()
            recovered = await client.get("/readyz")
    finally:
        await proxy.close()
        await close_database()
        await open_database(orm)

    assert cut.status_code == 503
    assert (await body_text(cut)).startswith("database: ")
    assert waited < CHECK_TIMEOUT + 1
    assert recovered.status_code == 200


async def test_readyz_is_503_within_the_timeout_when_the_database_hangs(settings, backend, orm):
    if backend != "postgres":
        pytest.skip("a database behind TCP: PostgreSQL")
    proxy = TcpProxy.for_url(orm)
    await proxy.start()
    await close_database()
    await open_database(proxy.url(orm))
    try:
        async with running(settings) as application:
            client = application.test_client()
            assert (await client.get("/readyz")).status_code == 200

            proxy.hang()
            started = time.monotonic()
            hung = await client.get("/readyz")
            waited = time.monotonic() - started

            await proxy.restore()
            recovered = await client.get("/readyz")
    finally:
        await proxy.close()
        await close_database()
        await open_database(orm)

    assert hung.status_code == 503
    assert "no answer within" in await body_text(hung)
    assert CHECK_TIMEOUT - 0.5 < waited < CHECK_TIMEOUT + 1
    assert recovered.status_code == 200


async def test_metrics_are_not_found_while_no_token_is_set(client):
    response = await client.get("/metrics")

    assert response.status_code == 404
    assert await body_text(response) == "Not Found"


@pytest.mark.parametrize("authorization", [None, "Bearer wrong-token", "Basic bWV0cmljcw==", "Bearer "])
async def test_metrics_need_the_token(settings, authorization):
    async with running(settings, metrics_token="metrics-token") as application:
        headers = {"Authorization": authorization} if authorization else {}
        response = await application.test_client().get("/metrics", headers=headers)

    assert response.status_code == 401
    assert await body_text(response) == "Unauthenticated"
    assert response.headers["WWW-Authenticate"] == "Bearer"


async def test_metrics_count_requests_by_route_and_status(settings, application):
    route = "/applications/<application_id>/submit"
    before = sample("earful_http_requests_total", route=route, method="POST", status="201")
    stored = sample("earful_capture_submits_total", outcome="stored")
    refused = sample("earful_capture_submits_total", outcome="refused")
    async with running(settings, metrics_token="metrics-token") as app:
        client = app.test_client()
        submit = f"/applications/{application.id}/submit?key={application.key_javascript}"
        for _ in range(3):
            await client.post(submit, json={"email": "ann@example.org", "message": "The export fails."})
        await client.post(submit, json={"email": "ann@example.org"})
        response = await client.get("/metrics", headers={"Authorization": "Bearer metrics-token"})

    assert response.status_code == 200
    assert response.mimetype == "text/plain"
    text = await body_text(response)
    assert f'earful_http_requests_total{{method="POST",route="{route}",status="201"}} {before + 3}' in text
    assert sample("earful_capture_submits_total", outcome="stored") == stored + 3
    assert sample("earful_capture_submits_total", outcome="refused") == refused + 1
    assert "earful_http_request_duration_seconds_bucket{" in text
    assert f"/applications/{application.id}/" not in text  # the rule, never the path


async def test_metrics_show_the_queues(settings, db):
    async with running(settings, metrics_token="metrics-token") as application:
        response = await application.test_client().get(
            "/metrics", headers={"Authorization": "Bearer metrics-token"}
        )

    text = await body_text(response)
    for queue in ("email", "webhook"):
        assert f'earful_queue_depth{{queue="{queue}",status="pending"}} 0.0' in text
        assert f'earful_queue_oldest_age_seconds{{queue="{queue}"}} 0.0' in text


async def test_the_metrics_listener_serves_metrics_without_a_token_and_nothing_else(settings, db):
    listener = {"server": ("127.0.0.1", METRICS_PORT)}
    async with running(settings, metrics_bind=("127.0.0.1", METRICS_PORT)) as application:
        client = application.test_client()
        metrics = await client.get("/metrics", scope_base=listener)
        ready = await client.get("/readyz", scope_base=listener)
        other = await client.get("/app/login", scope_base=listener)
        main_metrics = await client.get("/metrics")
        main_other = await client.get("/app/login")

    assert metrics.status_code == 200
    assert "earful_http_requests_total" in await body_text(metrics)
    assert ready.status_code == 200
    assert other.status_code == 404
    assert main_metrics.status_code == 404  # no token: not on the main listener
    assert main_other.status_code == 200
