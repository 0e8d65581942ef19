"""The API tests' deployment on a bucket: a test marked ``@ON_DISK_AND_IN_A_BUCKET`` runs once
with the files in the data dir (the usual settings) and once in a bucket of the S3 server on
loopback (EARFUL_STORAGE_URL and the AWS variables, as an operator sets them)."""

from __future__ import annotations

import dataclasses

import pytest

from app.config import Settings
from app.services.deployment import use_settings
from tests.s3_fixtures import BUCKET, S3Server, new_prefix

ON_DISK_AND_IN_A_BUCKET = pytest.mark.parametrize("settings", ["local", "s3"], indirect=True)


@pytest.fixture
def settings(request: pytest.FixtureRequest, settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """The test deployment's settings; with the parameter ``s3``, files go to a bucket."""
    if getattr(request, "param", "local") == "local":
        return settings
    s3: S3Server = request.getfixturevalue("s3_server")
    for name, value in s3.environment().items():
        monkeypatch.setenv(name, value)
    on_s3 = dataclasses.replace(settings, storage_url=f"s3://{BUCKET}/{new_prefix()}")
    use_settings(on_s3)
    return on_s3
