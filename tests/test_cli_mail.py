"""``earful smtp`` and ``earful worker`` as real processes on a SQLite data dir."""

from __future__ import annotations

import os
import signal
import smtplib
import sqlite3
import subprocess
import sys
import time
from email.message import EmailMessage
from pathlib import Path

import pytest

from tests.smtp_relay import free_port

EARFUL = Path(sys.executable).parent / "earful"
CREATE_APPLICATION = """
import asyncio
from app.services.storage import storage_for
from app.config import load_settings
from app.db import close_database, open_database
from app.models import User
from app.services.applications import create_application, intake_address

async def main():
    settings = load_settings()
    await open_database(settings.database_url)
    application = await create_application(await User.get(), {"name": "Shop"}, None, storage_for(settings))
    print(intake_address(application, settings.intake_domain))
    await close_database()

asyncio.run(main())
"""


def environment(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EARFUL_")}
    env.update(EARFUL_DATA_DIR=str(data_dir), EARFUL_INTAKE_DOMAIN="in.example.test", **extra)
    return env


def earful(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(EARFUL), *args], env=env, capture_output=True, text=True, timeout=60)


def wait_for_port(port: int, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stdout.read() if process.stdout else ""
        try:
            with smtplib.SMTP("127.0.0.1", port, timeout=2):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("earful smtp did not listen within 20 s")


def test_earful_smtp_turns_mail_into_threads_until_stopped(tmp_path):
    env = environment(tmp_path / "data")
    assert earful(env, "db", "upgrade").returncode == 0
    database = tmp_path / "data" / "earful.sqlite3"
    assert earful(env, "user", "create", "--email", "a@example.com", "--name", "A").returncode == 0
    intake = subprocess.run(
        [sys.executable, "-c", CREATE_APPLICATION], env=env, capture_output=True, text=True
    )
    assert intake.returncode == 0, intake.stderr
    address = intake.stdout.strip()
    port = free_port()
    process = subprocess.Popen(
        [str(EARFUL), "smtp", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        wait_for_port(port, process)
        message = EmailMessage()
        message["From"] = "Jo <jo@example.org>"
        message["To"] = address
        message["Subject"] = "Hello"
        message.set_content("Mail through the command.")
        with smtplib.SMTP("127.0.0.1", port, timeout=10) as client:
            client.send_message(message)
            with pytest.raises(smtplib.SMTPRecipientsRefused):
                client.send_message(message, to_addrs=[address.replace("feedback-", "feedback-9")])
    finally:
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=20)
    assert process.returncode == 0, output
    assert "in.example.test" in output
    with sqlite3.connect(database) as connection:
        rows = connection.execute("SELECT message FROM feedback").fetchall()
    assert rows == [("Hello\n\nMail through the command.",)]


def test_earful_worker_refuses_an_smtp_url_it_cannot_use(tmp_path):
    env = environment(tmp_path / "data", EARFUL_SECRET_KEY="k")
    wrong = earful({**env, "EARFUL_SMTP_URL": "http://relay.test"}, "worker")
    assert wrong.returncode == 1
    assert "smtp://" in wrong.stderr
