"""The deployment's settings, for the rules that run deep inside a write where no caller has
them to pass: the links and avatars of a webhook event, the addresses of a notification.
``create_app`` sets them once per process (every process that writes creates the app)."""

from __future__ import annotations

from app.config import Settings

_current: dict[str, Settings] = {}


def use_settings(settings: Settings) -> None:
    """The settings of this process's deployment."""
    _current["settings"] = settings


def current_settings() -> Settings:
    settings = _current.get("settings")
    if settings is None:
        raise RuntimeError("the deployment's settings are not set: call create_app() first")
    return settings
