"""Schemathesis against a live server on each database (see tests/contract/fuzzing.py)."""

from __future__ import annotations

import os

import pytest

from tests.conftest import POSTGRES_ENV
from tests.contract.fuzzing import run

# Seconds of fuzzing per database: a few minutes of CI in all, with the seed of schemathesis.toml.
FUZZ_SECONDS = int(os.environ.get("EARFUL_FUZZ_SECONDS", "75"))


def test_fuzzing_finds_no_server_error_and_no_drift_on_sqlite():
    assert run(None, None, FUZZ_SECONDS) == 0, "schemathesis found failures: see the output above"


def test_fuzzing_finds_no_server_error_and_no_drift_on_postgresql():
    url = os.environ.get(POSTGRES_ENV)
    if not url:
        pytest.skip(f"PostgreSQL fuzzing skipped: {POSTGRES_ENV} is not set")
    assert run(url, None, FUZZ_SECONDS) == 0, "schemathesis found failures: see the output above"
