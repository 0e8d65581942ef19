"""A real S3-compatible server on loopback for the storage tests (moto in server mode, one for the
session), and the ``storage`` fixture that runs a test once on the data dir and once on a bucket.

Every test gets a prefix of its own in the session's bucket, so tests never see each other's
objects. Credentials are always given: without them the S3 clients ask the EC2 metadata address
(stack notes §15), and a test never leaves loopback.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from moto.server import ThreadedMotoServer

from app.services.storage import LocalStorage, S3Settings, S3Storage, Storage

os.environ["AWS_EC2_METADATA_DISABLED"] = "true"

BUCKET = "earful-test"


@dataclass(frozen=True)
class S3Server:
    """The running server: its address, and the settings and variables that reach it."""

    endpoint: str

    def settings(self, prefix: str) -> S3Settings:
        return S3Settings(
            bucket=BUCKET,
            prefix=prefix,
            endpoint=self.endpoint,
            region="us-east-1",
            access_key_id="testing",
            secret_access_key="testing",
            allow_http=True,
        )

    def environment(self) -> dict[str, str]:
        """The AWS variables of an Earful that stores in this server (EARFUL_STORAGE_URL aside)."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_REGION": "us-east-1",
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_ALLOW_HTTP": "true",
            "AWS_EC2_METADATA_DISABLED": "true",
        }


def new_prefix() -> str:
    return f"test-{uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    """moto's S3 on a free loopback port, with the bucket ``earful-test``."""
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        httpx.put(f"{endpoint}/{BUCKET}").raise_for_status()  # moto checks no signature
        yield S3Server(endpoint)
    finally:
        server.stop()


@pytest.fixture
def s3_storage(s3_server: S3Server) -> S3Storage:
    """A prefix of its own in the session's bucket."""
    return S3Storage(s3_server.settings(new_prefix()))


@pytest.fixture(params=["local", "s3"])
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> Storage:
    """The data dir of the test (``tmp_path / "data"``, the settings fixture's), then a bucket."""
    if request.param == "local":
        return LocalStorage(tmp_path / "data")
    s3: S3Storage = request.getfixturevalue("s3_storage")
    return s3
