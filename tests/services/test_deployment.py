"""The deployment's settings, set by create_app for the rules deep inside a write."""

from __future__ import annotations

import dataclasses

import pytest

from app import create_app
from app.services import deployment
from tests.conftest import PLAIN_DEPLOYMENT


def test_creating_the_app_sets_the_deployments_settings():
    changed = dataclasses.replace(PLAIN_DEPLOYMENT, base_url="https://feedback.example.com")

    create_app(changed)

    try:
        assert deployment.current_settings() is changed
    finally:
        deployment.use_settings(PLAIN_DEPLOYMENT)


def test_without_settings_a_rule_that_needs_them_says_so(monkeypatch):
    monkeypatch.setattr(deployment, "_current", {})

    with pytest.raises(RuntimeError, match="create_app"):
        deployment.current_settings()
