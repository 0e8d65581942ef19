"""Webhooks from a real ``earful serve``: a server killed between the commit of a change and
the delivery of its event still delivers it after a restart (the durable queue's promise)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import httpx

from app.services.webhooks.delivery import LEASE
from tests.browser.live import EARFUL, free_port
from tests.webhook_receiver import running_receiver


def start_server(data_dir: Path, port: int) -> subprocess.Popen[bytes]:
    """``earful serve`` in a process group of its own (the supervisor and its workers)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("EARFUL_")}
    env.update(
        EARFUL_DATA_DIR=str(data_dir),
        EARFUL_BASE_URL=f"http://127.0.0.1:{port}",
        EARFUL_WEBHOOK_ALLOW_PRIVATE="1",
        EARFUL_MIN_FILL_SECONDS="0",
    )
    with (data_dir / f"serve-{port}.log").open("ab") as log:  # the server keeps its own copy
        return subprocess.Popen(
            [str(EARFUL), "serve", "--port", str(port)], env=env, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip


def wait_until_serving(base_url: str, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60  # a fresh data dir migrates first; a busy machine is slow
    while time.monotonic() < deadline:
        assert server.poll() is None, f"earful serve exited with {server.returncode}"
        try:
            httpx.get(f"{base_url}/app/login", timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.2)
    raise AssertionError("earful serve did not answer within 60 s")


def cli(data_dir: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EARFUL_")}
    env["EARFUL_DATA_DIR"] = str(data_dir)
    done = subprocess.run(
        [str(EARFUL), *args], env=env, capture_output=True, text=True, timeout=60, check=True
    )
    return done.stdout.strip()


def set_up(base_url: str, data_dir: Path, receiver_url: str) -> tuple[str, dict[str, object], str]:
    """An agent's token, an application, and a webhook to the receiver with its secret."""
    cli(
        data_dir,
        "user",
        "create",
        "--email",
        "ann@example.com",
        "--name",
        "Ann",
        "--password",
        "pw-123456789",
    )
    token = cli(
        data_dir, "token", "create", "--email", "ann@example.com", "--scope", "read", "--scope", "write"
    )
    headers = {"Authorization": f"Bearer {token}"}
    application = httpx.post(f"{base_url}/applications", headers=headers, data={"name": "Shop"}).json()[
        "data"
    ]
    created = httpx.post(
        f"{base_url}/applications/{application['id']}/webhooks", headers=headers, json={"url": receiver_url}
    )
    assert created.status_code == 201, created.text
    return token, application, created.json()["data"]["secret"]


def submit(base_url: str, application: dict[str, object]) -> None:
    keys = application["keys"]
    assert isinstance(keys, dict)
    response = httpx.post(
        f"{base_url}/applications/{application['id']}/submit",
        params={"key": keys["javascript"]},
        json={"email": "jane@example.org", "message": "The export button does nothing."},
    )
    assert response.status_code == 201, response.text


async def test_a_server_killed_between_the_commit_and_the_delivery_delivers_after_a_restart(tmp_path):
    data_dir = tmp_path / "data"
    data_dir.mkdir(mode=0o700)
    async with running_receiver() as receiver:
        port = free_port()
        base_url = f"http://127.0.0.1:{port}"
        server = start_server(data_dir, port)
        try:
            await asyncio.to_thread(wait_until_serving, base_url, server)
            token, application, secret = await asyncio.to_thread(set_up, base_url, data_dir, receiver.url)
            receiver.hang = True  # the first attempt is under way when the server dies
            await asyncio.to_thread(submit, base_url, application)
            async with asyncio.timeout(15):
                [first] = await receiver.wait_for(1)
        finally:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=15)
        receiver.hang = False

        port = free_port()
        base_url = f"http://127.0.0.1:{port}"
        server = start_server(data_dir, port)
        try:
            await asyncio.to_thread(wait_until_serving, base_url, server)
            async with asyncio.timeout(LEASE.total_seconds() + 30):
                received = await receiver.wait_for(2)
            deliveries = await asyncio.to_thread(
                lambda: httpx.get(
                    f"{base_url}/applications/{application['id']}/webhooks",
                    headers={"Authorization": f"Bearer {token}"},
                ).json()
            )
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=15)

    again = received[1]
    assert again.headers["webhook-id"] == first.headers["webhook-id"]
    event = again.verified_with(secret)
    assert event is not None and event["type"] == "feedback.created"
    assert json.loads(again.body) == json.loads(first.body)
    assert deliveries["data"][0]["url"] == receiver.url
