"""The ``earful`` console script (contract §1), run as a real process on a SQLite data dir.

These tests need no ``db`` fixture: each command opens the database named by its environment,
``EARFUL_DATA_DIR`` under the test's temporary folder, and exits.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from app.services.security import verify_password

EARFUL = Path(sys.executable).parent / "earful"
ADMIN_EMAIL = "admin@earful.local"
DATABASE_FILE = "earful.sqlite3"
SERVE_TIMEOUT = 15.0
ANN_EMAIL = "ann@example.com"
CREATE_ANN = ("user", "create", "--email", ANN_EMAIL, "--name", "Ann Lee", "--password", "s3cret-pass")


@dataclass
class Earful:
    """Runs ``earful`` commands against one data dir."""

    data_dir: Path

    @property
    def env(self) -> dict[str, str]:
        env = {key: value for key, value in os.environ.items() if not key.startswith("EARFUL_")}
        env["EARFUL_DATA_DIR"] = str(self.data_dir)
        return env

    def __call__(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(EARFUL), *args], env=self.env, capture_output=True, text=True, timeout=60, check=False
        )

    def query(self, sql: str, *params: object) -> list[tuple]:
        connection = sqlite3.connect(self.data_dir / DATABASE_FILE)
        try:
            return connection.execute(sql, params).fetchall()
        finally:
            connection.close()


def succeeded(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert result.returncode == 0, result.stderr
    return result


def assert_failed(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode != 0
    assert result.stdout == ""
    assert result.stderr.strip() != ""


@pytest.fixture(scope="module")
def migrated_database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file built once by ``earful db upgrade``, copied by each test that needs one."""
    earful = Earful(tmp_path_factory.mktemp("template") / "data")
    succeeded(earful("db", "upgrade"))
    return earful.data_dir / DATABASE_FILE


@pytest.fixture(scope="module")
def database_with_ann(tmp_path_factory: pytest.TempPathFactory, migrated_database: Path) -> Path:
    """A copy of the migrated database where ``earful user create`` has created Ann, built once."""
    earful = Earful(tmp_path_factory.mktemp("template_ann") / "data")
    earful.data_dir.mkdir()
    shutil.copy(migrated_database, earful.data_dir / DATABASE_FILE)
    succeeded(earful(*CREATE_ANN))
    return earful.data_dir / DATABASE_FILE


@pytest.fixture
def earful(tmp_path: Path, migrated_database: Path) -> Earful:
    """``earful`` on a data dir whose database is migrated and empty."""
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    shutil.copy(migrated_database, data_dir / DATABASE_FILE)
    return Earful(data_dir)


@pytest.fixture
def ann(earful: Earful, database_with_ann: Path) -> str:
    """The e-mail of Ann, created by ``earful user create`` in the test's database."""
    shutil.copy(database_with_ann, earful.data_dir / DATABASE_FILE)
    return ANN_EMAIL


# db upgrade ----------------------------------------------------------------------------------


def test_db_upgrade_creates_the_database_in_the_data_dir(tmp_path):
    earful = Earful(tmp_path / "data")

    result = earful("db", "upgrade")

    assert result.returncode == 0, result.stderr
    tables = {name for (name,) in earful.query("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"users", "access_tokens", "organizations", "applications", "feedback", "replies"} <= tables


def test_db_upgrade_is_safe_to_run_again(earful, ann):
    applied = earful.query("SELECT app, name FROM tortoise_migrations ORDER BY id")

    result = earful("db", "upgrade")

    assert result.returncode == 0, result.stderr
    assert earful.query("SELECT app, name FROM tortoise_migrations ORDER BY id") == applied
    assert earful.query("SELECT email FROM users") == [("ann@example.com",)]


# user create ---------------------------------------------------------------------------------


def test_user_create_prints_the_user_as_one_json_line(earful):
    result = earful(
        "user", "create", "--email", "ann@example.com", "--name", "Ann Lee", "--password", "s3cret-pass"
    )

    assert result.returncode == 0, result.stderr
    assert len(result.stdout.splitlines()) == 1
    assert json.loads(result.stdout) == {"id": 1, "email": "ann@example.com", "name": "Ann Lee"}


def test_user_create_without_password_prints_only_the_user_on_stdout(earful):
    result = earful("user", "create", "--email", "bo@example.com", "--name", "Bo")

    assert result.returncode == 0, result.stderr
    assert len(result.stdout.splitlines()) == 1
    assert json.loads(result.stdout) == {"id": 1, "email": "bo@example.com", "name": "Bo"}


def test_user_create_stores_the_given_password(earful, ann):
    [(password_hash,)] = earful.query("SELECT password_hash FROM users WHERE email = ?", ann)

    assert verify_password(password_hash, "s3cret-pass")
    assert not verify_password(password_hash, "wrong-pass")


def test_user_create_with_a_taken_email_fails(earful, ann):
    result = earful("user", "create", "--email", ann, "--name", "Ann Again", "--password", "s3cret-pass")

    assert_failed(result)
    assert earful.query("SELECT name FROM users") == [("Ann Lee",)]


# token create --------------------------------------------------------------------------------


def test_token_create_prints_the_token_alone(earful, ann):
    result = earful("token", "create", "--email", ann, "--scope", "read", "--scope", "write", "--name", "CI")

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("ea_")
    assert lines[0] == lines[0].strip()


def test_token_create_stores_the_digest_with_its_scopes_and_name(earful, ann):
    token = succeeded(
        earful("token", "create", "--email", ann, "--scope", "read", "--name", "CI")
    ).stdout.strip()
    digest = hashlib.sha256(token.encode()).hexdigest()

    rows = earful.query(
        "SELECT users.email, access_tokens.scopes, access_tokens.name, access_tokens.revoked_at"
        " FROM access_tokens JOIN users ON users.id = access_tokens.user_id"
        " WHERE access_tokens.token_hash = ?",
        digest,
    )

    assert rows == [(ann, "read", "CI", None)]


def test_token_create_with_read_and_write_scopes_stores_both(earful, ann):
    token = succeeded(
        earful("token", "create", "--email", ann, "--scope", "write", "--scope", "read")
    ).stdout.strip()
    digest = hashlib.sha256(token.encode()).hexdigest()

    [(scopes,)] = earful.query("SELECT scopes FROM access_tokens WHERE token_hash = ?", digest)

    assert set(scopes.split()) == {"read", "write"}


def test_token_create_for_an_unknown_user_fails(earful):
    result = earful("token", "create", "--email", "nobody@example.com", "--scope", "read")

    assert_failed(result)
    assert earful.query("SELECT COUNT(*) FROM access_tokens") == [(0,)]


# org create and plan set ---------------------------------------------------------------------


def test_org_create_prints_the_organization_as_json(earful, ann):
    result = earful("org", "create", "--name", "Acme", "--member", ann, "--plan", "team")

    assert result.returncode == 0, result.stderr
    assert len(result.stdout.splitlines()) == 1
    assert json.loads(result.stdout) == {"id": 1, "name": "Acme"}


def test_org_create_adds_the_members_and_the_plan(earful, ann):
    succeeded(earful("org", "create", "--name", "Acme", "--member", ann, "--plan", "team"))

    assert earful.query("SELECT name, plan FROM organizations") == [("Acme", "team")]
    assert earful.query(
        "SELECT users.email FROM memberships JOIN users ON users.id = memberships.user_id"
        " WHERE memberships.organization_id = 1"
    ) == [(ann,)]


def test_org_create_with_an_unknown_member_fails(earful):
    result = earful("org", "create", "--name", "Acme", "--member", "nobody@example.com")

    assert_failed(result)
    assert earful.query("SELECT COUNT(*) FROM organizations") == [(0,)]


def test_plan_set_for_an_organization_prints_nothing(earful, ann):
    succeeded(earful("org", "create", "--name", "Acme", "--member", ann))

    result = earful("plan", "set", "--org", "1", "team")

    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert earful.query("SELECT plan FROM organizations WHERE id = 1") == [("team",)]


def test_plan_set_for_a_user_prints_nothing(earful, ann):
    result = earful("plan", "set", "--user", ann, "team")

    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert earful.query("SELECT plan FROM users WHERE email = ?", ann) == [("team",)]


def test_plan_set_with_an_unknown_plan_fails(earful, ann):
    result = earful("plan", "set", "--user", ann, "gold")

    assert_failed(result)
    assert earful.query("SELECT plan FROM users WHERE email = ?", ann) == [("free",)]


@pytest.mark.parametrize(
    "owner",
    [pytest.param(["--org", "99"], id="organization"), pytest.param(["--user", "x@example.com"], id="user")],
)
def test_plan_set_for_an_unknown_owner_fails(earful, owner):
    assert_failed(earful("plan", "set", *owner, "team"))


# serve ---------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class Served:
    stdout: str
    unauthenticated: httpx.Response


def serve_once(earful: Earful) -> Served:
    """Start ``earful serve``, wait until it answers, ask for /users/me without a token, stop it."""
    port = free_port()
    process = subprocess.Popen(
        [str(EARFUL), "serve", "--port", str(port)],
        env=earful.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        response = wait_until_answering(process, f"http://127.0.0.1:{port}/users/me")
    finally:
        process.terminate()
        try:
            stdout, _ = process.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            stdout, _ = process.communicate()
    return Served(stdout, response)


def wait_until_answering(process: subprocess.Popen[str], url: str) -> httpx.Response:
    deadline = time.monotonic() + SERVE_TIMEOUT
    while True:
        if process.poll() is not None:
            pytest.fail(f"earful serve exited with status {process.returncode}")
        try:
            return httpx.get(url, timeout=2)
        except httpx.TransportError:
            if time.monotonic() > deadline:
                pytest.fail(f"earful serve did not answer within {SERVE_TIMEOUT} s")
            time.sleep(0.1)


@pytest.fixture(scope="module")
def first_and_second_start(tmp_path_factory: pytest.TempPathFactory) -> tuple[Earful, Served, Served]:
    """Two starts of ``earful serve`` on a new, empty data dir."""
    earful = Earful(tmp_path_factory.mktemp("serve") / "data")
    first = serve_once(earful)
    second = serve_once(earful)
    return earful, first, second


def printed_password(stdout: str) -> str | None:
    found = re.search(r"password:\s*(\S+)", stdout, re.IGNORECASE)
    return found.group(1) if found else None


def test_serve_first_start_prints_the_admin_email_and_password(first_and_second_start):
    earful, first, _ = first_and_second_start

    assert ADMIN_EMAIL in first.stdout
    password = printed_password(first.stdout)
    assert password
    [(password_hash,)] = earful.query("SELECT password_hash FROM users WHERE email = ?", ADMIN_EMAIL)
    assert verify_password(password_hash, password)


def test_serve_answers_the_management_api_without_token_with_401(first_and_second_start):
    _, first, _ = first_and_second_start

    assert first.unauthenticated.status_code == 401
    assert first.unauthenticated.headers["content-type"].startswith("text/plain")
    assert first.unauthenticated.text == "Unauthenticated"
    assert first.unauthenticated.headers["www-authenticate"] == "Bearer"


def test_serve_second_start_prints_no_password(first_and_second_start):
    earful, _, second = first_and_second_start

    assert second.unauthenticated.status_code == 401
    assert printed_password(second.stdout) is None
    assert ADMIN_EMAIL not in second.stdout
    assert earful.query("SELECT email FROM users") == [(ADMIN_EMAIL,)]


# sentiment-recompute --------------------------------------------------------------------------


def test_sentiment_recompute_prints_what_it_read_and_changed(earful):
    result = succeeded(earful("sentiment-recompute"))

    assert json.loads(result.stdout) == {"applications": 0, "threads_changed": 0}


def test_sentiment_recompute_of_an_unknown_application_fails(earful):
    assert_failed(earful("sentiment-recompute", "--application", "7"))
