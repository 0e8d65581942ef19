"""Where attachments and logos are kept: files under the data dir (the default), or objects in
an S3-compatible service (AWS S3, MinIO, Cloudflare R2, Ceph) when ``EARFUL_STORAGE_URL`` is
``s3://bucket/prefix``.

Both hold the same keys, relative paths: ``uploads/<application id>/<name>`` and
``logos/<application id>/<name>``. On disk a key is a path under EARFUL_DATA_DIR, written as it
always was (folders 0700, files 0600, through a temporary file renamed into place); in a bucket
it is the object's key after the prefix, stored with its content type.

The S3 client is obstore: one Rust extension of 15 MB with no dependencies (aiobotocore is 49 MB
with aiohttp and a pinned botocore), async from end to end, it streams an object in chunks and
raises the builtin ``FileNotFoundError`` for a missing key. Its traps (stack notes §15): a plain
http endpoint (MinIO, moto) needs ``allow_http`` (AWS_ALLOW_HTTP=true), and without credentials
it asks the EC2 metadata address, which is right on EC2 with an instance role only; so the
settings are read here, from the usual AWS variables, and passed to it explicitly.

Downloads are streamed through Earful (see app/api/files.py), not redirected to pre-signed URLs:
the bucket's answer could not carry the sandbox CSP and nosniff headers that keep a user's file
from running as a page, a pre-signed URL is a second capability that works for anyone holding
it until it expires, and the bucket need not be reachable from browsers at all.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import shutil
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit

import obstore
from obstore.exceptions import BaseError
from obstore.store import S3Store

from app.config import Settings
from app.private_files import write_private_file

logger = logging.getLogger("earful.storage")

UPLOADS = "uploads"
LOGOS = "logos"
# Objects are streamed to the client in chunks of this size at least.
CHUNK_BYTES = 256 * 1024
# Keys per DeleteObjects request (S3 takes at most 1000).
DELETE_BATCH = 1000


class StorageError(Exception):
    """The object storage could not be reached, or refused a request."""


@dataclass(frozen=True)
class StoredFile:
    """A stored file, ready to be sent: its size and version, and either its path on disk (sent
    by the web server from there) or its bytes, as chunks to stream."""

    size: int
    last_modified: datetime | None
    etag: str | None
    path: Path | None = None
    chunks: AsyncIterator[bytes] | None = None


def upload_key(application_id: int, name: str) -> str:
    """The key of an uploaded file of an application."""
    return f"{UPLOADS}/{application_id}/{name}"


def logo_key(application_id: int, name: str) -> str:
    """The key of a logo of an application."""
    return f"{LOGOS}/{application_id}/{name}"


def application_folders(application_id: int) -> tuple[str, str]:
    """The folders of an application's files (what goes with the application)."""
    return f"{UPLOADS}/{application_id}", f"{LOGOS}/{application_id}"


class Storage(ABC):
    """Files by key: written whole, read as a stream, deleted by key or by folder."""

    @abstractmethod
    async def put(self, key: str, content: bytes, content_type: str) -> None:
        """Store ``content`` under ``key``, replacing what was there."""

    @abstractmethod
    async def open(self, key: str) -> StoredFile | None:
        """The file under ``key``, ready to send; None when there is none."""

    @abstractmethod
    async def read(self, key: str) -> bytes | None:
        """The bytes under ``key``; None when there are none."""

    @abstractmethod
    async def exists(self, key: str) -> bool:
        """Whether a file is stored under ``key``."""

    @abstractmethod
    async def delete(self, keys: Sequence[str]) -> None:
        """Delete the files under ``keys``; a key with no file is no error."""

    @abstractmethod
    async def delete_folder(self, folder: str) -> None:
        """Delete every file whose key starts with ``folder/``."""

    @abstractmethod
    async def keys(self, folder: str) -> list[str]:
        """The keys of every file under ``folder/``, sorted."""

    @abstractmethod
    async def check(self) -> bool:
        """Whether the storage can be used now (a readiness probe); the reason is logged when not."""


class LocalStorage(Storage):
    """Files under the data dir: folders 0700, files 0600, replaced atomically."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def __repr__(self) -> str:
        return f"LocalStorage({str(self.root)!r})"

    def path(self, key: str) -> Path:
        """Where the file of ``key`` is on disk."""
        return self.root / key

    async def put(self, key: str, content: bytes, content_type: str) -> None:
        write_private_file(self.path(key), content)

    async def open(self, key: str) -> StoredFile | None:
        path = self.path(key)
        try:
            status = path.stat()
        except FileNotFoundError:
            return None
        modified = datetime.fromtimestamp(status.st_mtime, UTC)
        return StoredFile(status.st_size, modified, None, path=path)

    async def read(self, key: str) -> bytes | None:
        try:
            return self.path(key).read_bytes()
        except FileNotFoundError:
            return None

    async def exists(self, key: str) -> bool:
        return self.path(key).is_file()

    async def delete(self, keys: Sequence[str]) -> None:
        for key in keys:
            self.path(key).unlink(missing_ok=True)

    async def delete_folder(self, folder: str) -> None:
        shutil.rmtree(self.path(folder), ignore_errors=True)

    async def keys(self, folder: str) -> list[str]:
        base = self.path(folder)
        return sorted(str(path.relative_to(self.root)) for path in base.rglob("*") if path.is_file())

    async def check(self) -> bool:
        if self.root.is_dir() and os.access(self.root, os.W_OK | os.X_OK):
            return True
        logger.warning("the data dir %s is missing or not writable", self.root)
        return False


@dataclass(frozen=True)
class S3Settings:
    """Where a bucket is and how to sign in to it."""

    bucket: str
    prefix: str = ""
    endpoint: str | None = None
    region: str | None = None
    access_key_id: str | None = None
    secret_access_key: str | None = None
    session_token: str | None = None
    allow_http: bool = False


class S3Storage(Storage):
    """Objects in a bucket of an S3-compatible service, through obstore."""

    def __init__(self, settings: S3Settings) -> None:
        self.settings = settings
        config: dict[str, str] = {}
        for name in ("endpoint", "region", "access_key_id", "secret_access_key", "session_token"):
            value = getattr(settings, name)
            if value:
                config[name] = value
        self._store = S3Store(
            settings.bucket,
            prefix=settings.prefix or None,
            config=config,  # type: ignore[arg-type]  # the keys above are S3Config's
            client_options={
                "allow_http": settings.allow_http,
                "connect_timeout": timedelta(seconds=5),
                "timeout": timedelta(seconds=60),
            },
            # A storage that does not answer must not hold a request for minutes.
            retry_config={"max_retries": 3, "retry_timeout": timedelta(seconds=10)},
        )

    def __repr__(self) -> str:
        where = f"s3://{self.settings.bucket}/{self.settings.prefix}".rstrip("/")
        return f"S3Storage({where!r})"

    async def put(self, key: str, content: bytes, content_type: str) -> None:
        try:
            await obstore.put_async(self._store, key, content, attributes={"Content-Type": content_type})
        except BaseError as error:
            raise StorageError(f"could not store {key}: {error}") from error

    async def open(self, key: str) -> StoredFile | None:
        try:
            result = await obstore.get_async(self._store, key)
        except FileNotFoundError:
            return None
        except BaseError as error:
            raise StorageError(f"could not read {key}: {error}") from error
        meta = result.meta
        return StoredFile(
            size=meta["size"],
            last_modified=meta["last_modified"],
            etag=(meta["e_tag"] or "").strip('"') or None,
            chunks=_chunks(result.stream(min_chunk_size=CHUNK_BYTES)),
        )

    async def read(self, key: str) -> bytes | None:
        try:
            result = await obstore.get_async(self._store, key)
            return bytes(await result.bytes_async())
        except FileNotFoundError:
            return None
        except BaseError as error:
            raise StorageError(f"could not read {key}: {error}") from error

    async def exists(self, key: str) -> bool:
        try:
            await obstore.head_async(self._store, key)
        except FileNotFoundError:
            return False
        except BaseError as error:
            raise StorageError(f"could not look for {key}: {error}") from error
        return True

    async def delete(self, keys: Sequence[str]) -> None:
        try:
            for start in range(0, len(keys), DELETE_BATCH):
                await obstore.delete_async(self._store, list(keys[start : start + DELETE_BATCH]))
        except BaseError as error:
            raise StorageError(f"could not delete {len(keys)} objects: {error}") from error

    async def delete_folder(self, folder: str) -> None:
        await self.delete(await self.keys(folder))

    async def keys(self, folder: str) -> list[str]:
        found: list[str] = []
        try:
            async for batch in obstore.list(self._store, f"{folder}/", chunk_size=DELETE_BATCH):
                found.extend(meta["path"] for meta in batch)
        except BaseError as error:
            raise StorageError(f"could not list {folder}: {error}") from error
        return sorted(found)

    async def check(self) -> bool:
        try:
            await obstore.list_with_delimiter_async(self._store)
        except BaseError as error:
            logger.warning("object storage %r unavailable: %s", self, str(error).split("\n", 1)[0])
            return False
        return True


async def _chunks(stream: AsyncIterator[object]) -> AsyncIterator[bytes]:
    """obstore's chunks (buffers) as bytes, which the web server sends as they are."""
    async for chunk in stream:
        yield bytes(chunk)  # type: ignore[call-overload]  # obstore.Bytes is a buffer


def _flag(environ: Mapping[str, str], name: str) -> bool:
    raw = (environ.get(name) or "").strip().lower()
    if raw in ("", "0", "false", "no"):
        return False
    if raw in ("1", "true", "yes"):
        return True
    raise ValueError(f"{name} must be true or false (it is {raw!r})")


def s3_settings(url: str, environ: Mapping[str, str]) -> S3Settings:
    """The bucket and prefix of ``s3://bucket/prefix``, with the endpoint, region and
    credentials of the usual AWS variables (AWS_ENDPOINT_URL, AWS_REGION or AWS_DEFAULT_REGION,
    AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_ALLOW_HTTP)."""
    parts = urlsplit(url)
    if parts.scheme != "s3" or not parts.netloc or parts.query or parts.fragment:
        raise ValueError(f"EARFUL_STORAGE_URL must be s3://bucket or s3://bucket/prefix (it is {url!r})")

    def value(*names: str) -> str | None:
        for name in names:
            found = (environ.get(name) or "").strip()
            if found:
                return found
        return None

    endpoint = value("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")
    allow_http = _flag(environ, "AWS_ALLOW_HTTP")
    if endpoint and endpoint.startswith("http://") and not allow_http:
        # obstore's own message for this is a bare "builder error".
        raise ValueError(f"the S3 endpoint {endpoint} is plain http: set AWS_ALLOW_HTTP=true to use it")
    return S3Settings(
        bucket=parts.netloc,
        prefix=parts.path.strip("/"),
        endpoint=endpoint,
        region=value("AWS_REGION", "AWS_DEFAULT_REGION"),
        access_key_id=value("AWS_ACCESS_KEY_ID"),
        secret_access_key=value("AWS_SECRET_ACCESS_KEY"),
        session_token=value("AWS_SESSION_TOKEN"),
        allow_http=allow_http,
    )


def open_storage(settings: Settings, environ: Mapping[str, str] | None = None) -> Storage:
    """The storage the settings name: the bucket of EARFUL_STORAGE_URL, else the data dir."""
    if settings.storage_url:
        return S3Storage(s3_settings(settings.storage_url, os.environ if environ is None else environ))
    return LocalStorage(settings.data_dir)


@functools.lru_cache(maxsize=16)
def storage_for(settings: Settings) -> Storage:
    """The storage of a deployment, one per process (its S3 client keeps its connections)."""
    return open_storage(settings)


async def remove(storage: Storage, keys: Sequence[str]) -> None:
    """Delete the files of rows already deleted (after their transaction committed). Shielded: a
    request cancelled meanwhile still removes them. A storage that fails leaves files without
    rows, never served and only taking space; the failure is logged, not raised, since the
    deletion itself is done."""
    if not keys:
        return
    try:
        await asyncio.shield(storage.delete(keys))
    except StorageError:
        logger.exception("%d files of deleted rows were left in %r", len(keys), storage)


async def remove_folders(storage: Storage, folders: Sequence[str]) -> None:
    """Delete every file under ``folders`` (an application's, after its row is deleted), as
    :func:`remove` does: shielded, and a failure logged, not raised."""

    async def delete_all() -> None:
        for folder in folders:
            await storage.delete_folder(folder)

    try:
        await asyncio.shield(delete_all())
    except StorageError:
        logger.exception("files under %s were left in %r", ", ".join(folders), storage)
