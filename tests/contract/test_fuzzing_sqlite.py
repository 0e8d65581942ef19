"""Schemathesis against a live server on SQLite (see tests/contract/fuzzing.py)."""

from __future__ import annotations

from tests.contract.fuzzing import FUZZ_SECONDS, run


def test_fuzzing_finds_no_server_error_and_no_drift_on_sqlite():
    assert run(None, None, FUZZ_SECONDS) == 0, "schemathesis found failures: see the output above"
