"""The README's walk-through runs as printed against a freshly started server."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from app.openapi.tables import errors_table

ROOT = Path(__file__).resolve().parent.parent
EARFUL = Path(sys.executable).parent / "earful"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _walkthrough(port: int) -> str:
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## API walk-through") : text.index("### Endpoints")]
    script = "\n".join(re.findall(r"```sh\n(.*?)```", section, re.S))
    return "set -euo pipefail\n" + script.replace("127.0.0.1:8000", f"127.0.0.1:{port}")


def _wait_until_serving(port: int, server: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60  # a fresh data dir migrates first; a busy machine is slow
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise AssertionError(f"earful serve exited with {server.returncode}")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/users/me", timeout=1).close()
        except urllib.error.HTTPError as answer:
            answer.close()
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError("earful serve did not answer within 60 s")


@pytest.fixture
def served(tmp_path: Path):
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("EARFUL_")}
    env["EARFUL_DATA_DIR"] = str(tmp_path / "data")
    env["EARFUL_BASE_URL"] = f"http://127.0.0.1:{port}"
    env["PATH"] = f"{EARFUL.parent}:{env['PATH']}"
    with (tmp_path / "serve.log").open("wb") as log:
        server = subprocess.Popen(
            [str(EARFUL), "serve", "--port", str(port)], env=env, stdout=log, stderr=subprocess.STDOUT
        )
        try:
            _wait_until_serving(port, server)
            yield port, env, tmp_path
        finally:
            server.terminate()
            server.wait(timeout=15)


def test_readme_walkthrough_runs_as_printed(served):
    port, env, workdir = served
    (workdir / ".venv").symlink_to(ROOT / ".venv")

    result = subprocess.run(
        ["bash", "-c", _walkthrough(port)], cwd=workdir, env=env, capture_output=True, text=True, timeout=120
    )

    assert result.returncode == 0, result.stderr
    output = result.stdout
    assert '{"data":{"id":1,"email":"admin@earful.local","name":"Admin"}}' in output
    assert "Feedback sent!" in output
    assert "Tu mensaje es demasiado corto" in output
    assert "Your plan does not include internal notes" in output
    assert '"type":"note","message":"Refund issued"' in output
    assert '"organization_id":1' in output


def test_readme_errors_table_is_the_documents():
    text = (ROOT / "README.md").read_text()
    table = text[
        text.index("<!-- errors:begin -->\n") + len("<!-- errors:begin -->\n") : text.index(
            "<!-- errors:end -->"
        )
    ]

    assert table == errors_table(), "run: python -m app.openapi.tables, and paste it into the README"
