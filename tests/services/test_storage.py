"""The storage of attachments and logos (app/services/storage.py): the same rules on the data dir
and on a bucket of a real S3-compatible server (moto, on loopback)."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path

import obstore
import pytest

from app.config import Settings
from app.services.storage import (
    LocalStorage,
    S3Settings,
    S3Storage,
    StorageError,
    application_folders,
    logo_key,
    open_storage,
    remove,
    remove_folders,
    s3_settings,
    upload_key,
)
from tests.s3_fixtures import BUCKET


async def _read_stream(storage, key: str) -> bytes:
    stored = await storage.open(key)
    assert stored is not None
    if stored.path is not None:
        return stored.path.read_bytes()
    return b"".join([chunk async for chunk in stored.chunks])


async def test_a_stored_file_reads_back_with_its_size(storage):
    key = upload_key(7, "abc")

    await storage.put(key, b"steps to reproduce", "text/plain")

    assert await storage.read(key) == b"steps to reproduce"
    assert await _read_stream(storage, key) == b"steps to reproduce"
    stored = await storage.open(key)
    assert stored.size == len(b"steps to reproduce")
    assert stored.last_modified is not None
    assert await storage.exists(key)


async def test_a_large_file_streams_in_chunks(storage):
    content = os.urandom(1024 * 1024 + 17)
    await storage.put(upload_key(7, "big"), content, "application/octet-stream")

    assert await _read_stream(storage, upload_key(7, "big")) == content


async def test_a_missing_key_is_none_and_not_there(storage):
    assert await storage.open(upload_key(7, "missing")) is None
    assert await storage.read(upload_key(7, "missing")) is None
    assert not await storage.exists(upload_key(7, "missing"))


async def test_putting_again_replaces_the_file(storage):
    await storage.put(logo_key(1, "a.png"), b"first", "image/png")
    await storage.put(logo_key(1, "a.png"), b"second", "image/png")

    assert await storage.read(logo_key(1, "a.png")) == b"second"


async def test_deleting_removes_the_named_files_and_ignores_missing_ones(storage):
    for name in ("a", "b", "c"):
        await storage.put(upload_key(1, name), name.encode(), "text/plain")

    await storage.delete([upload_key(1, "a"), upload_key(1, "c"), upload_key(1, "never")])

    assert await storage.keys("uploads") == [upload_key(1, "b")]


async def test_keys_lists_a_folder_and_nothing_beside_it(storage):
    await storage.put(upload_key(1, "a"), b"a", "text/plain")
    await storage.put(upload_key(12, "b"), b"b", "text/plain")
    await storage.put(logo_key(1, "c.png"), b"c", "image/png")

    assert await storage.keys("uploads/1") == [upload_key(1, "a")]
    assert await storage.keys("uploads") == [upload_key(1, "a"), upload_key(12, "b")]
    assert await storage.keys("logos/7") == []


async def test_deleting_an_applications_folders_keeps_the_others(storage):
    await storage.put(upload_key(1, "a"), b"a", "text/plain")
    await storage.put(logo_key(1, "b.png"), b"b", "image/png")
    await storage.put(upload_key(10, "c"), b"c", "text/plain")

    await remove_folders(storage, application_folders(1))

    assert await storage.keys("uploads") + await storage.keys("logos") == [upload_key(10, "c")]


async def test_a_working_storage_passes_its_check(storage):
    await storage.put(upload_key(1, "a"), b"a", "text/plain")  # the data dir exists once written

    assert await storage.check()


# --- on disk ---------------------------------------------------------------------------------


@pytest.fixture
def open_umask() -> Iterator[None]:
    """The usual umask (022), under which a plain write makes a file every local user may read."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


async def test_on_disk_a_key_is_its_path_under_the_data_dir(tmp_path):
    await LocalStorage(tmp_path).put(upload_key(7, "abc"), b"a message", "text/plain")

    assert (tmp_path / "uploads" / "7" / "abc").read_bytes() == b"a message"


async def test_on_disk_a_file_only_its_user_can_read(tmp_path, open_umask):
    await LocalStorage(tmp_path).put(upload_key(7, "abc"), b"a message", "text/plain")

    assert (tmp_path / "uploads" / "7" / "abc").stat().st_mode & 0o777 == 0o600


async def test_on_disk_missing_folders_only_its_user_can_enter(tmp_path, open_umask):
    await LocalStorage(tmp_path / "data").put(logo_key(7, "a.png"), b"a logo", "image/png")

    for path in (tmp_path / "data", tmp_path / "data" / "logos", tmp_path / "data" / "logos" / "7"):
        assert path.stat().st_mode & 0o777 == 0o700, path


async def test_on_disk_a_stored_file_is_sent_from_its_path(tmp_path):
    await LocalStorage(tmp_path).put(upload_key(7, "abc"), b"a message", "text/plain")

    stored = await LocalStorage(tmp_path).open(upload_key(7, "abc"))

    assert stored.path == tmp_path / "uploads" / "7" / "abc"
    assert stored.chunks is None


async def test_a_data_dir_that_is_not_there_fails_the_check(tmp_path, caplog):
    assert not await LocalStorage(tmp_path / "missing").check()
    assert "missing or not writable" in caplog.text


# --- in a bucket -----------------------------------------------------------------------------


async def test_in_a_bucket_objects_carry_their_type_and_live_under_the_prefix(s3_server, s3_storage):
    await s3_storage.put(upload_key(7, "abc"), b"hello", "text/plain")
    whole_bucket = S3Storage(s3_server.settings(""))

    assert f"{s3_storage.settings.prefix}/uploads/7/abc" in await whole_bucket.keys(
        s3_storage.settings.prefix
    )
    stored = await s3_storage.open(upload_key(7, "abc"))
    assert stored.path is None
    assert stored.etag
    result = await obstore.get_async(s3_storage._store, upload_key(7, "abc"))
    assert result.attributes["Content-Type"] == "text/plain"


async def test_a_bucket_out_of_reach_fails_the_check_and_raises_storage_errors(caplog):
    down = S3Storage(
        S3Settings(
            bucket=BUCKET,
            endpoint="http://127.0.0.1:1",
            region="us-east-1",
            access_key_id="testing",
            secret_access_key="testing",
            allow_http=True,
        )
    )
    assert not await down.check()
    assert "unavailable" in caplog.text
    with pytest.raises(StorageError):
        await down.put(upload_key(1, "a"), b"a", "text/plain")
    with pytest.raises(StorageError):
        await down.open(upload_key(1, "a"))


async def test_a_bucket_that_does_not_exist_fails_the_check(s3_server):
    missing = S3Storage(S3Settings(**{**s3_server.settings("").__dict__, "bucket": "no-such-bucket"}))

    assert not await missing.check()


async def test_removing_the_files_of_deleted_rows_logs_a_failure_instead_of_raising(caplog):
    class Failing(LocalStorage):
        async def delete(self, keys):
            raise StorageError("out of reach")

    with caplog.at_level(logging.ERROR, "earful.storage"):
        await remove(Failing(Path("/nonexistent")), [upload_key(1, "a")])

    assert "1 files of deleted rows were left" in caplog.text


# --- settings ----------------------------------------------------------------------------------


def test_the_bucket_and_prefix_come_from_the_url_and_the_rest_from_the_aws_variables():
    found = s3_settings(
        "s3://earful-files/prod/eu",
        {
            "AWS_ENDPOINT_URL": "http://minio.internal:9000",
            "AWS_DEFAULT_REGION": "eu-west-1",
            "AWS_ACCESS_KEY_ID": "AKIA",
            "AWS_SECRET_ACCESS_KEY": "secret",
            "AWS_ALLOW_HTTP": "true",
        },
    )

    assert found == S3Settings(
        bucket="earful-files",
        prefix="prod/eu",
        endpoint="http://minio.internal:9000",
        region="eu-west-1",
        access_key_id="AKIA",
        secret_access_key="secret",
        allow_http=True,
    )


def test_aws_region_wins_over_the_default_region_and_https_is_the_default():
    found = s3_settings("s3://files", {"AWS_REGION": "us-west-2", "AWS_DEFAULT_REGION": "eu-west-1"})

    assert (found.bucket, found.prefix, found.region, found.allow_http) == ("files", "", "us-west-2", False)


@pytest.mark.parametrize("url", ["s3://", "s3:///prefix", "http://bucket/prefix", "s3://bucket?x=1"])
def test_a_storage_url_that_names_no_bucket_is_refused(url):
    with pytest.raises(ValueError, match="EARFUL_STORAGE_URL must be s3://bucket"):
        s3_settings(url, {})


def test_an_allow_http_that_is_not_a_flag_is_refused():
    with pytest.raises(ValueError, match="AWS_ALLOW_HTTP must be true or false"):
        s3_settings("s3://files", {"AWS_ALLOW_HTTP": "maybe"})


def test_a_plain_http_endpoint_needs_allow_http():
    with pytest.raises(ValueError, match="set AWS_ALLOW_HTTP=true"):
        s3_settings("s3://files", {"AWS_ENDPOINT_URL": "http://minio.internal:9000"})


def test_the_data_dir_is_the_default_storage(tmp_path):
    settings = Settings("sqlite://:memory:", tmp_path, "http://x", "x", "k")

    storage = open_storage(settings, {})

    assert isinstance(storage, LocalStorage)
    assert storage.root == tmp_path


def test_a_storage_url_makes_a_bucket_the_storage(tmp_path):
    settings = Settings("sqlite://:memory:", tmp_path, "http://x", "x", "k", storage_url="s3://files/earful")

    storage = open_storage(settings, {"AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b"})

    assert isinstance(storage, S3Storage)
    assert (storage.settings.bucket, storage.settings.prefix) == ("files", "earful")
