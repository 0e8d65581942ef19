"""Schemathesis against a live server on PostgreSQL (see tests/contract/fuzzing.py).

A file of its own, apart from SQLite's, so that the two runs of a minute and a half each go to
different test processes (``--dist loadfile``) instead of one after the other at the end.
"""

from __future__ import annotations

import os

import pytest

from tests.conftest import POSTGRES_ENV
from tests.contract.fuzzing import FUZZ_SECONDS, run


def test_fuzzing_finds_no_server_error_and_no_drift_on_postgresql():
    url = os.environ.get(POSTGRES_ENV)
    if not url:
        pytest.skip(f"PostgreSQL fuzzing skipped: {POSTGRES_ENV} is not set")
    assert run(url, None, FUZZ_SECONDS) == 0, "schemathesis found failures: see the output above"
