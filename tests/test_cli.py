"""The ``earful`` console script (contract §1), run as a real process on a SQLite data dir.

These tests need no ``db`` fixture: each command opens the database named by its environment,
``EARFUL_DATA_DIR`` under the test's temporary folder, and exits.
"""

from __future__ import annotations

import hashlib
import json
import os
import pty
import re
import select
import shutil
import signal
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
from tests.browser.live import live_site

EARFUL = Path(sys.executable).parent / "earful"
ADMIN_EMAIL = "admin@earful.local"
DATABASE_FILE = "earful.sqlite3"
PASSWORD_FILE = "first-admin-password"
SERVE_TIMEOUT = 45.0  # a fresh data dir runs every migration first; slow on a busy machine
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
        env["EARFUL_LOG_FORMAT"] = "text"  # the lines these tests read (tests/test_logs.py: JSON)
        return env

    def __call__(self, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(EARFUL), *args],
            env=self.env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    def at_a_terminal(self, *args: str, answers: tuple[str, ...]) -> tuple[int, str]:
        """Run a command whose stdin is a terminal; type ``answers`` at its prompts (lines that
        end in ``password: ``); returns the exit status and everything the terminal showed."""
        pid, terminal = pty.fork()
        if pid == 0:  # the child: its controlling terminal is the pty
            os.execve(str(EARFUL), [str(EARFUL), *args], self.env)
        shown, typed = b"", 0
        deadline = time.monotonic() + 60
        try:
            while time.monotonic() < deadline:
                if not select.select([terminal], [], [], 0.5)[0]:
                    continue
                try:
                    chunk = os.read(terminal, 1024)
                except OSError:  # EIO: the command ended and closed the terminal
                    break
                if not chunk:
                    break
                shown += chunk
                if typed < len(answers) and shown.count(b"password") > typed and shown.endswith(b": "):
                    os.write(terminal, answers[typed].encode() + b"\n")
                    typed += 1
            else:
                os.kill(pid, signal.SIGKILL)
        finally:
            os.close(terminal)
        _, status = os.waitpid(pid, 0)
        return os.waitstatus_to_exitcode(status), shown.decode(errors="replace")

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


def modes(data_dir: Path, leave_out: frozenset[str] = frozenset()) -> dict[str, int]:
    """The permission bits of the data dir and of everything in it, by path relative to it."""
    found = {".": data_dir.stat().st_mode & 0o777}
    for path in data_dir.rglob("*"):
        name = str(path.relative_to(data_dir))
        if name not in leave_out:
            found[name] = path.stat().st_mode & 0o777
    return found


def assert_private(found: dict[str, int]) -> None:
    """Folders 0700 and files 0600: nobody but Earful's user reads the data dir."""
    assert {name: mode for name, mode in found.items() if mode not in (0o700, 0o600)} == {}


def test_db_upgrade_creates_a_data_dir_only_its_user_can_read(tmp_path):
    earful = Earful(tmp_path / "data")

    succeeded(earful("db", "upgrade"))

    found = modes(earful.data_dir)
    assert found["."] == 0o700
    assert found[DATABASE_FILE] == 0o600
    assert found["secret_key"] == 0o600
    assert_private(found)


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


# user set-password ---------------------------------------------------------------------------


def _password_and_version(earful: Earful, email: str) -> tuple[str, int]:
    [row] = earful.query("SELECT password_hash, session_version FROM users WHERE email = ?", email)
    return row


def test_user_set_password_sets_the_given_password_and_ends_the_sessions(earful, ann):
    _, version = _password_and_version(earful, ann)

    result = earful("user", "set-password", "--email", ann, "--password", "n3w-passphrase")

    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    password_hash, new_version = _password_and_version(earful, ann)
    assert verify_password(password_hash, "n3w-passphrase")
    assert not verify_password(password_hash, "s3cret-pass")
    assert new_version == version + 1


def test_user_set_password_reads_one_line_from_stdin(earful, ann):
    result = earful("user", "set-password", "--email", ann, stdin="piped passphrase\nnot this line\n")

    assert result.returncode == 0, result.stderr
    assert verify_password(_password_and_version(earful, ann)[0], "piped passphrase")


def test_user_set_password_asks_twice_at_a_terminal_without_echo(earful, ann):
    status, shown = earful.at_a_terminal(
        "user", "set-password", "--email", ann, answers=("typed passphrase", "typed passphrase")
    )

    assert status == 0, shown
    assert "New password: " in shown and "New password, again: " in shown
    assert "typed passphrase" not in shown
    assert verify_password(_password_and_version(earful, ann)[0], "typed passphrase")


def test_user_set_password_changes_nothing_when_the_two_typed_passwords_differ(earful, ann):
    before = _password_and_version(earful, ann)

    status, shown = earful.at_a_terminal(
        "user", "set-password", "--email", ann, answers=("typed passphrase", "another passphrase")
    )

    assert status == 1
    assert "The two passwords differ" in shown
    assert _password_and_version(earful, ann) == before


def test_a_bucket_that_earful_cannot_reach_as_set_stops_every_command(tmp_path):
    env = Earful(tmp_path / "data").env
    env.update(
        EARFUL_STORAGE_URL="s3://files", AWS_ENDPOINT_URL="http://minio.internal:9000", AWS_ALLOW_HTTP=""
    )

    result = subprocess.run(
        [str(EARFUL), "db", "upgrade"], env=env, capture_output=True, text=True, timeout=60, check=False
    )

    assert result.returncode == 1
    assert "set AWS_ALLOW_HTTP=true" in result.stderr


def test_user_set_password_of_an_unknown_address_fails(earful, ann):
    result = earful("user", "set-password", "--email", "nobody@example.com", "--password", "n3w-passphrase")

    assert_failed(result)
    assert result.returncode == 1
    assert "nobody@example.com" in result.stderr


def test_user_set_password_refuses_a_short_password(earful, ann):
    before = _password_and_version(earful, ann)

    result = earful("user", "set-password", "--email", ann, stdin="short\n")

    assert_failed(result)
    assert "at least 8 characters" in result.stderr
    assert _password_and_version(earful, ann) == before


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


def _roles(earful: Earful) -> list[tuple[str, str]]:
    return earful.query(
        "SELECT users.email, memberships.role FROM memberships JOIN users ON users.id = memberships.user_id"
        " WHERE memberships.organization_id = 1 ORDER BY users.email"
    )


def test_org_create_makes_the_first_member_the_owner_and_the_others_agents(earful, ann):
    succeeded(earful("user", "create", "--email", "bob@example.com", "--name", "Bob"))

    succeeded(earful("org", "create", "--name", "Acme", "--member", "bob@example.com", "--member", ann))

    assert _roles(earful) == [(ann, "agent"), ("bob@example.com", "owner")]


def test_org_create_with_owners_makes_them_owners_and_the_members_agents(earful, ann):
    succeeded(earful("user", "create", "--email", "bob@example.com", "--name", "Bob"))
    succeeded(earful("user", "create", "--email", "cid@example.com", "--name", "Cid"))

    result = earful(
        "org", "create", "--name", "Acme", "--member", ann, "--owner", "bob@example.com",
        "--owner", "cid@example.com",
    )  # fmt: skip

    assert json.loads(succeeded(result).stdout) == {"id": 1, "name": "Acme"}
    assert _roles(earful) == [(ann, "agent"), ("bob@example.com", "owner"), ("cid@example.com", "owner")]


def test_org_create_with_an_unknown_owner_fails(earful, ann):
    result = earful("org", "create", "--name", "Acme", "--member", ann, "--owner", "nobody@example.com")

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
    stderr: str
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
            stdout, stderr = process.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            stdout, stderr = process.communicate()
    return Served(stdout, stderr, response)


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


def test_serve_first_start_without_a_terminal_writes_the_admin_password_to_a_private_file(
    first_and_second_start,
):
    earful, _, _ = first_and_second_start
    password_file = earful.data_dir / PASSWORD_FILE

    password = password_file.read_text().strip()

    assert password_file.stat().st_mode & 0o777 == 0o600
    [(password_hash,)] = earful.query("SELECT password_hash FROM users WHERE email = ?", ADMIN_EMAIL)
    assert verify_password(password_hash, password)


def test_serve_first_start_without_a_terminal_prints_where_the_password_is_not_the_password(
    first_and_second_start,
):
    earful, first, _ = first_and_second_start
    password = (earful.data_dir / PASSWORD_FILE).read_text().strip()

    assert password not in first.stdout + first.stderr
    assert printed_password(first.stdout) is None
    assert ADMIN_EMAIL in first.stdout
    assert str(earful.data_dir / PASSWORD_FILE) in first.stdout


def serve_in_a_terminal(earful: Earful) -> str:
    """Start ``earful serve`` with its stdout on a pseudo-terminal, read it until the server
    says where it serves, stop it; returns what it printed."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [str(EARFUL), "serve", "--port", str(free_port())],
        env=earful.env,
        stdout=terminal,
        stderr=subprocess.DEVNULL,
    )
    os.close(terminal)
    output = b""
    deadline = time.monotonic() + SERVE_TIMEOUT
    try:
        while b"Earful serves on" not in output and time.monotonic() < deadline:
            if select.select([controller], [], [], 0.5)[0]:
                try:
                    output += os.read(controller, 4096)
                except OSError:  # EIO: the process closed the terminal
                    break
    finally:
        process.terminate()
        process.wait(timeout=15)
        os.close(controller)
    return output.decode().replace("\r\n", "\n")


def test_serve_first_start_in_a_terminal_prints_the_admin_email_and_password(tmp_path):
    earful = Earful(tmp_path / "data")

    output = serve_in_a_terminal(earful)

    assert ADMIN_EMAIL in output
    password = printed_password(output)
    assert password
    [(password_hash,)] = earful.query("SELECT password_hash FROM users WHERE email = ?", ADMIN_EMAIL)
    assert verify_password(password_hash, password)
    assert not (earful.data_dir / PASSWORD_FILE).exists()


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


def test_serve_creates_a_data_dir_only_its_user_can_read(first_and_second_start):
    earful, first, _ = first_and_second_start

    assert_private(modes(earful.data_dir))
    assert "chmod" not in first.stdout + first.stderr


def test_serve_warns_when_the_data_dir_is_open_to_other_users(earful):
    earful.data_dir.chmod(0o755)

    served = serve_once(earful)

    assert served.unauthenticated.status_code == 401
    assert f"WARNING] the data dir {earful.data_dir} is open to other users (mode 755)" in served.stderr
    assert f"chmod 700 {earful.data_dir}" in served.stderr


def test_serve_warns_when_the_database_is_open_to_other_users(earful):
    earful.data_dir.chmod(0o700)
    database = earful.data_dir / DATABASE_FILE
    database.chmod(0o644)

    served = serve_once(earful)

    assert f"WARNING] the database {database} is open to other users (mode 644)" in served.stderr
    assert f"chmod 600 {database}" in served.stderr
    assert "chmod 700" not in served.stderr


PNG = b"\x89PNG\r\n\x1a\n" + bytes(64)


def test_serve_stores_uploads_and_logos_only_its_user_can_read(tmp_path):
    data_dir = tmp_path / "data"
    with live_site(data_dir) as site:
        token = site.create_agent(ANN_EMAIL, "Ann Lee", "s3cret-pass")
        response = site.http.post(
            f"{site.base_url}/applications",
            headers={"Authorization": f"Bearer {token}"},
            data={"name": "Acme"},
            files={"logo": ("logo.png", PNG, "image/png")},
        )
        response.raise_for_status()
        site.upload(response.json()["data"], "notes.txt", b"the notes", "text/plain")

    found = modes(data_dir, leave_out=frozenset({"serve.log"}))
    assert any(name.startswith("uploads/") and mode == 0o600 for name, mode in found.items())
    assert any(name.startswith("logos/") and mode == 0o600 for name, mode in found.items())
    assert_private(found)


# sentiment-recompute --------------------------------------------------------------------------


def test_sentiment_recompute_prints_what_it_read_and_changed(earful):
    result = succeeded(earful("sentiment-recompute"))

    assert json.loads(result.stdout) == {"applications": 0, "threads_changed": 0}


def test_sentiment_recompute_of_an_unknown_application_fails(earful):
    assert_failed(earful("sentiment-recompute", "--application", "7"))


# retention run --------------------------------------------------------------------------------

RETENTION_DATA = """
import asyncio, sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from app import create_app
from app.config import Settings, sqlite_url
from app.db import atomic, close_database, open_database
from app.models import Feedback
from tests.factories import make_application, make_thread, make_user

async def main():
    url = sqlite_url(Path(sys.argv[1]))
    create_app(Settings(url, Path(sys.argv[1]).parent, "http://x", "x", "k"), manage_db=False)  # the links
    await open_database(url)
    user = await make_user()
    application = await make_application(user, retention_days=30)
    other = await make_application(user)
    for target, days in ((application, 40), (application, 31), (application, 2), (other, 400)):
        thread = await make_thread(application=target)
        moment = datetime.now(UTC) - timedelta(days=days)
        await atomic(lambda: Feedback.filter(id=thread.id).update(created_at=moment))
    print(application.id)
    await close_database()

asyncio.run(main())
"""


def test_retention_run_prints_what_it_deleted(earful):
    made = subprocess.run(
        [sys.executable, "-c", RETENTION_DATA, str(earful.data_dir / DATABASE_FILE)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    application_id = int(made.stdout)

    result = succeeded(earful("retention", "run"))

    assert json.loads(result.stdout) == {"threads": 2, "applications": [{"id": application_id, "threads": 2}]}
    assert earful.query("SELECT COUNT(*) FROM feedback") == [(2,)]
    assert earful.query("SELECT open_threads FROM applications WHERE id = ?", application_id) == [(1,)]
    assert earful.query("SELECT action, counts FROM audit_entries") == [("retention.run", '{"threads":2}')]


def test_retention_run_with_nothing_due_prints_zero(earful):
    result = succeeded(earful("retention", "run"))

    assert json.loads(result.stdout) == {"threads": 0, "applications": []}


# member erase / export (privacy requests) ------------------------------------------------------

PERSON_DATA = """
import asyncio, sys
from pathlib import Path
from app import create_app
from app.config import Settings, sqlite_url
from app.db import close_database, open_database
from tests.factories import make_application, make_thread, make_user

async def main():
    url = sqlite_url(Path(sys.argv[1]))
    create_app(Settings(url, Path(sys.argv[1]).parent, "http://x", "x", "k"), manage_db=False)  # the links
    await open_database(url)
    user = await make_user()
    ids = []
    for _ in range(2):
        application = await make_application(user)
        await make_thread(application, email="pat@example.org", message="Pat's words")
        await make_thread(application, email="sam@example.org")
        ids.append(application.id)
    print(*ids)
    await close_database()

asyncio.run(main())
"""


def _person_data(earful: Earful) -> list[int]:
    """Two applications, each with a thread of pat@example.org and one of sam@example.org."""
    made = subprocess.run(
        [sys.executable, "-c", PERSON_DATA, str(earful.data_dir / DATABASE_FILE)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    return [int(number) for number in made.stdout.split()]


def test_member_erase_erases_the_person_everywhere_and_prints_the_counts(earful):
    _person_data(earful)

    result = succeeded(earful("member", "erase", "--email", "Pat@Example.org"))

    assert json.loads(result.stdout) == {
        "applications": 2, "senders": 2, "threads": 2, "replies": 0, "attachments": 0, "emails": 0,
    }  # fmt: skip
    assert earful.query("SELECT email FROM members") == [("sam@example.org",), ("sam@example.org",)]
    assert earful.query("SELECT SUM(open_threads) FROM applications") == [(2,)]
    assert earful.query("SELECT actor_id, application_id, action FROM audit_entries") == [
        (None, None, "person.erase")
    ]


def test_member_erase_with_an_application_erases_there_only(earful):
    first, second = _person_data(earful)

    result = succeeded(earful("member", "erase", "--email", "pat@example.org", "--application", str(second)))

    assert json.loads(result.stdout)["threads"] == 1
    assert earful.query("SELECT application_id FROM members WHERE email = 'pat@example.org'") == [(first,)]


def test_member_erase_with_a_bad_address_fails_with_the_apis_message(earful):
    result = earful("member", "erase", "--email", "not-an-address")

    assert_failed(result)
    assert "The email field must be a valid email address." in result.stderr
    assert earful.query("SELECT COUNT(*) FROM audit_entries") == [(0,)]


def test_member_erase_with_an_unknown_application_fails(earful):
    result = earful("member", "erase", "--email", "pat@example.org", "--application", "99")

    assert_failed(result)
    assert "Invalid application" in result.stderr


def test_member_export_prints_the_persons_data_as_json(earful):
    first, second = _person_data(earful)

    result = succeeded(earful("member", "export", "--email", "pat@example.org"))

    document = json.loads(result.stdout)
    assert [application["id"] for application in document["applications"]] == [first, second]
    assert [t["message"] for a in document["applications"] for t in a["threads"]] == ["Pat's words"] * 2
    assert "sam@example.org" not in result.stdout
    assert earful.query("SELECT action FROM audit_entries") == [("person.export",)]
