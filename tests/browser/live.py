"""A live Earful server for browser tests and screenshots: started with the real CLI, fed through the APIs."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from app.config import CAPTURE_LIMIT_VARIABLES

EARFUL = Path(sys.executable).parent / "earful"
CHROMIUM = os.environ.get("EARFUL_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@dataclass
class Agent:
    """An agent of a live site: their e-mail, an API token and an application of theirs."""

    email: str
    token: str
    application: dict[str, Any]

    @property
    def app_id(self) -> int:
        return int(self.application["id"])

    @property
    def inbox(self) -> str:
        return f"/app/applications/{self.app_id}/feedback"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class LiveSite:
    """A running ``earful serve`` and the means to put data into it."""

    base_url: str
    env: dict[str, str]
    http: httpx.Client = field(default_factory=lambda: httpx.Client(timeout=30))
    server: subprocess.Popen | None = None  # the master of `earful serve`: signal it to reload

    def cli(self, *args: str) -> str:
        """Run an earful command against this site's database; returns its stdout."""
        result = subprocess.run(
            [str(EARFUL), *args], env=self.env, capture_output=True, text=True, timeout=60, check=False
        )
        if result.returncode != 0:
            raise RuntimeError(f"earful {' '.join(args)} failed: {result.stderr}")
        return result.stdout.strip()

    def create_agent(self, email: str, name: str, password: str, plan: str = "free") -> str:
        """Create a user who can sign in; returns a read+write API token."""
        self.cli("user", "create", "--email", email, "--name", name, "--password", password)
        if plan != "free":
            self.cli("plan", "set", "--user", email, plan)
        return self.cli("token", "create", "--email", email, "--scope", "read", "--scope", "write")

    def create_application(self, token: str, **fields: str) -> dict[str, Any]:
        response = self.http.post(
            f"{self.base_url}/applications", headers={"Authorization": f"Bearer {token}"}, data=fields
        )
        response.raise_for_status()
        return response.json()["data"]

    def upload(self, application: dict[str, Any], name: str, content: bytes, mime: str) -> int:
        response = self.http.post(
            f"{self.base_url}/applications/{application['id']}/upload",
            params={"key": application["keys"]["javascript"]},
            files={"file": (name, content, mime)},
        )
        response.raise_for_status()
        return response.json()[0]

    def submit(self, application: dict[str, Any], **body: Any) -> None:
        response = self.http.post(
            f"{self.base_url}/applications/{application['id']}/submit",
            params={"key": application["keys"]["javascript"]},
            content=json.dumps(body),
            headers={"Content-Type": "application/json", "User-Agent": "Mozilla/5.0 (Earful demo)"},
        )
        assert response.status_code == 201, response.text

    def api_get(self, token: str, path: str) -> dict[str, Any]:
        response = self.http.get(f"{self.base_url}{path}", headers={"Authorization": f"Bearer {token}"})
        response.raise_for_status()
        return response.json()

    def reply(
        self, token: str, application_id: int, feedback_id: int, message: str, kind: str = "reply"
    ) -> None:
        response = self.http.post(
            f"{self.base_url}/applications/{application_id}/feedback/{feedback_id}/replies",
            headers={"Authorization": f"Bearer {token}"},
            json={"message": message, "type": kind},
        )
        response.raise_for_status()


@contextmanager
def live_site(data_dir: Path, workers: int = 1, **settings: str) -> Iterator[LiveSite]:
    """Start ``earful serve`` on a free port with its own data dir (and ``EARFUL_*`` settings,
    ``EARFUL_DATABASE_URL`` included) and ``workers`` worker processes, and stop it afterwards."""
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("EARFUL_")}
    # Tests submit far faster than people; a test of the rate limits sets an application's own.
    env.update({name: "1000000" for name in CAPTURE_LIMIT_VARIABLES.values()})
    # Scripts fill the widget faster than the minimum fill time; the test of it sets its own.
    env["EARFUL_MIN_FILL_SECONDS"] = "0"
    env.update(EARFUL_DATA_DIR=str(data_dir), EARFUL_BASE_URL=base_url, **settings)
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)  # private, as earful makes it
    with (data_dir / "serve.log").open("wb") as log:
        server = subprocess.Popen(
            [str(EARFUL), "serve", "--port", str(port), "--workers", str(workers)],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        site = LiveSite(base_url, env, server=server)
        try:
            _wait_until_serving(site, server)
            yield site
        finally:
            site.http.close()
            server.terminate()
            server.wait(timeout=15)


def _wait_until_serving(site: LiveSite, server: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60  # a fresh data dir migrates first; a busy machine is slow
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"earful serve exited with {server.returncode}")
        try:
            site.http.get(f"{site.base_url}/app/login", timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.2)
    raise RuntimeError("earful serve did not answer within 60 s")
