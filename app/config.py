"""Settings read from the EARFUL_* environment variables, in one place."""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from ipaddress import IPv4Network, IPv6Network
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlsplit

from app.private_files import make_private_dir


@dataclass(frozen=True)
class Quotas:
    """What one public widget key may make an application store: the key is in every customer's
    page, so these bound what anyone holding it can fill the disk and the inbox with."""

    files_per_upload: int = 10
    files_per_thread: int = 10
    upload_bytes_per_day: int = 200 * 1024 * 1024
    tags_per_submit: int = 10
    tag_length: int = 50
    tags_per_application: int = 1000
    properties_bytes: int = 16 * 1024


DEFAULT_QUOTAS = Quotas()


@dataclass(frozen=True)
class CaptureLimits:
    """The capture API's rate limits, per minute, where an application sets none of its own.

    Per address they are what one person typing into a widget never reaches, yet a script looping
    on a public key soon does; the ceiling bounds what many addresses together can add to one
    inbox, and is a defence against a botnet rather than a quota.
    """

    submits_per_minute: int = 10
    opens_per_minute: int = 60
    uploads_per_minute: int = 20
    submits_per_minute_total: int = 600


_Limits = TypeVar("_Limits", Quotas, CaptureLimits)


@dataclass(frozen=True)
class Settings:
    """Runtime configuration of one Earful deployment."""

    database_url: str
    data_dir: Path
    base_url: str
    intake_domain: str
    secret_key: str
    max_upload_bytes: int = 10 * 1024 * 1024
    max_request_bytes: int = 32 * 1024 * 1024
    smtp_url: str | None = None
    inbound_secret: str | None = None
    mail_from: str = ""
    trusted_proxies: tuple[IPv4Network | IPv6Network, ...] = field(default=())
    session_idle_minutes: int = 720
    quotas: Quotas = field(default_factory=Quotas)
    capture_limits: CaptureLimits = field(default_factory=CaptureLimits)
    # Attachments and logos in a bucket (s3://bucket/prefix); None keeps them in the data dir.
    storage_url: str | None = None
    # Shared rate-limit counters, and the capture caches dropped on every host at once when an
    # application changes; None keeps both in each worker.
    redis_url: str | None = None
    redis_key_prefix: str = "earful"
    # How often each worker process deletes the threads past their application's retention.
    retention_seconds: int = 600
    # A widget's form sent sooner than this after it was shown is a bot's (0: no minimum).
    min_fill_seconds: float = 2.0
    # Webhooks may go to loopback, private and link-local addresses (tests, intranet installs).
    webhook_allow_private: bool = False
    # The hour (UTC) at which agents' daily digests cover the 24 hours before.
    digest_hour: int = 7
    # Operations (app/logs.py, app/metrics.py, app/api/operations.py): the log lines' format
    # (auto, json or text), one line per request, /metrics's bearer token and its own listener.
    log_format: str = "auto"
    access_log: bool = True
    metrics_token: str | None = None
    metrics_bind: tuple[str, int] | None = None
    # Seconds a stopping worker gives the requests in flight (Hypercorn's graceful_timeout).
    graceful_timeout: int = 10

    @property
    def uploads_dir(self) -> Path:
        return self.data_dir / "uploads"

    @property
    def is_secure(self) -> bool:
        return self.base_url.startswith("https://")

    @property
    def mail_sender(self) -> str:
        """The From of the e-mails Earful sends: EARFUL_MAIL_FROM, else a no-reply intake address."""
        return self.mail_from or f"Earful <noreply@{self.intake_domain}>"


def _load_or_create_secret(data_dir: Path) -> str:
    """Read the generated secret key from the data dir, creating it on first use."""
    path = data_dir / "secret_key"
    if path.exists():
        return path.read_text().strip()
    make_private_dir(data_dir)
    key = secrets.token_urlsafe(48)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(key)
    return key


def sqlite_url(path: Path) -> str:
    """Build an absolute SQLite URL with the pragmas Earful relies on (see stack notes §3)."""
    return f"sqlite://{path.resolve()}?synchronous=NORMAL&busy_timeout=10000"


def _positive_int(env: Mapping[str, str], name: str, default: int) -> int:
    """A whole positive number from the environment; ValueError (naming the variable) otherwise."""
    raw = (env.get(name) or "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"{name} must be a whole number, at least 1 (it is {raw!r})")
    return int(raw)


QUOTA_VARIABLES = {
    "files_per_upload": "EARFUL_MAX_FILES_PER_UPLOAD",
    "files_per_thread": "EARFUL_MAX_FILES_PER_THREAD",
    "upload_bytes_per_day": "EARFUL_MAX_UPLOAD_BYTES_PER_DAY",
    "tags_per_submit": "EARFUL_MAX_TAGS_PER_SUBMIT",
    "tag_length": "EARFUL_MAX_TAG_LENGTH",
    "tags_per_application": "EARFUL_MAX_TAGS_PER_APPLICATION",
    "properties_bytes": "EARFUL_MAX_PROPERTIES_BYTES",
}


def _quotas(env: Mapping[str, str]) -> Quotas:
    """The capture quotas: each EARFUL_MAX_* variable, else its default."""
    return _positive_ints(Quotas, QUOTA_VARIABLES, env)


CAPTURE_LIMIT_VARIABLES = {
    "submits_per_minute": "EARFUL_SUBMITS_PER_MINUTE",
    "opens_per_minute": "EARFUL_OPENS_PER_MINUTE",
    "uploads_per_minute": "EARFUL_UPLOADS_PER_MINUTE",
    "submits_per_minute_total": "EARFUL_SUBMITS_PER_MINUTE_TOTAL",
}


def _capture_limits(env: Mapping[str, str]) -> CaptureLimits:
    """The deployment's default rate limits: each EARFUL_*_PER_MINUTE variable, else its default."""
    return _positive_ints(CaptureLimits, CAPTURE_LIMIT_VARIABLES, env)


def _positive_ints(kind: type[_Limits], variables: Mapping[str, str], env: Mapping[str, str]) -> _Limits:
    """A dataclass of positive integers, each field from its variable, else the field's default."""
    defaults = kind()
    return kind(
        **{
            name: _positive_int(env, variable, getattr(defaults, name))
            for name, variable in variables.items()
        }
    )


def _min_fill_seconds(env: Mapping[str, str]) -> float:
    """EARFUL_MIN_FILL_SECONDS: a number of seconds from 0 (no minimum) to 60; 2 when unset."""
    raw = (env.get("EARFUL_MIN_FILL_SECONDS") or "").strip()
    if not raw:
        return 2.0
    try:
        seconds = float(raw)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds <= 60:
        raise ValueError(f"EARFUL_MIN_FILL_SECONDS must be a number of seconds from 0 to 60 (it is {raw!r})")
    return seconds


def _digest_hour(env: Mapping[str, str]) -> int:
    """EARFUL_DIGEST_HOUR: the hour of the day (UTC, 0 to 23) of the daily digests; 7 when unset."""
    raw = (env.get("EARFUL_DIGEST_HOUR") or "").strip()
    if not raw:
        return 7
    if not raw.isdigit() or int(raw) > 23:
        raise ValueError(f"EARFUL_DIGEST_HOUR must be an hour from 0 to 23 (it is {raw!r})")
    return int(raw)


def _flag(env: Mapping[str, str], name: str, default: bool = False) -> bool:
    """A yes/no variable: 1, true or yes (any case) for yes; 0, false or no for no; unset, the
    default (no)."""
    raw = (env.get(name) or "").strip().lower()
    if not raw:
        return default
    if raw in ("0", "false", "no"):
        return False
    if raw in ("1", "true", "yes"):
        return True
    raise ValueError(f"{name} must be 1 or 0 (it is {raw!r})")


def _redis_url(env: Mapping[str, str]) -> str | None:
    """EARFUL_REDIS_URL: ``redis://host:port/db`` (or ``rediss://``); None when unset."""
    raw = (env.get("EARFUL_REDIS_URL") or "").strip()
    if raw and not raw.startswith(("redis://", "rediss://")):
        raise ValueError(f"EARFUL_REDIS_URL must start with redis:// or rediss:// (it is {raw!r})")
    return raw or None


def _storage_url(env: Mapping[str, str]) -> str | None:
    """EARFUL_STORAGE_URL: ``s3://bucket`` or ``s3://bucket/prefix``; None when unset."""
    raw = (env.get("EARFUL_STORAGE_URL") or "").strip()
    if raw and (not raw.startswith("s3://") or len(raw) == len("s3://")):
        raise ValueError(f"EARFUL_STORAGE_URL must be s3://bucket or s3://bucket/prefix (it is {raw!r})")
    return raw or None


def _log_format(env: Mapping[str, str]) -> str:
    """EARFUL_LOG_FORMAT: json, text, or auto (unset: text at a terminal, JSON otherwise)."""
    raw = (env.get("EARFUL_LOG_FORMAT") or "auto").strip().lower()
    if raw not in ("auto", "json", "text"):
        raise ValueError(f"EARFUL_LOG_FORMAT must be json, text or auto (it is {raw!r})")
    return raw


def _metrics_bind(env: Mapping[str, str]) -> tuple[str, int] | None:
    """EARFUL_METRICS_BIND: ``host:port`` (``[::1]:9100`` for IPv6); None when unset."""
    raw = (env.get("EARFUL_METRICS_BIND") or "").strip()
    if not raw:
        return None
    host, _, port = raw.rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"EARFUL_METRICS_BIND must look like 127.0.0.1:9100 (it is {raw!r})")
    return host, int(port)


def load_settings(environ: dict[str, str] | None = None) -> Settings:
    """Build the settings from environment variables, applying the contract's defaults.

    ``ValueError`` says which variable holds a value Earful cannot use.
    """
    from app.proxies import parse_networks

    env = os.environ if environ is None else environ
    data_dir = Path(env.get("EARFUL_DATA_DIR") or "./data").resolve()
    base_url = (env.get("EARFUL_BASE_URL") or "http://127.0.0.1:8000").rstrip("/")
    database_url = env.get("EARFUL_DATABASE_URL") or sqlite_url(data_dir / "earful.sqlite3")
    intake_domain = env.get("EARFUL_INTAKE_DOMAIN") or (urlsplit(base_url).hostname or "localhost")
    secret_key = env.get("EARFUL_SECRET_KEY") or _load_or_create_secret(data_dir)
    return Settings(
        database_url=database_url,
        data_dir=data_dir,
        base_url=base_url,
        intake_domain=intake_domain,
        secret_key=secret_key,
        smtp_url=env.get("EARFUL_SMTP_URL") or None,
        inbound_secret=env.get("EARFUL_INBOUND_SECRET") or None,
        mail_from=(env.get("EARFUL_MAIL_FROM") or "").strip(),
        trusted_proxies=parse_networks(env.get("EARFUL_TRUSTED_PROXIES") or ""),
        session_idle_minutes=_positive_int(env, "EARFUL_SESSION_IDLE_MINUTES", 720),
        retention_seconds=_positive_int(env, "EARFUL_RETENTION_SECONDS", 600),
        quotas=_quotas(env),
        capture_limits=_capture_limits(env),
        storage_url=_storage_url(env),
        redis_url=_redis_url(env),
        redis_key_prefix=(env.get("EARFUL_REDIS_KEY_PREFIX") or "").strip() or "earful",
        min_fill_seconds=_min_fill_seconds(env),
        webhook_allow_private=_flag(env, "EARFUL_WEBHOOK_ALLOW_PRIVATE"),
        digest_hour=_digest_hour(env),
        log_format=_log_format(env),
        access_log=_flag(env, "EARFUL_ACCESS_LOG", default=True),
        metrics_token=(env.get("EARFUL_METRICS_TOKEN") or "").strip() or None,
        metrics_bind=_metrics_bind(env),
        graceful_timeout=_positive_int(env, "EARFUL_GRACEFUL_TIMEOUT", 10),
    )
