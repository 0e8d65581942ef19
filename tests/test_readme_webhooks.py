"""The README's verification examples verify what Earful signs, in Python and in Node.js."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from app.repositories.webhooks import EndpointRow
from app.services.webhooks.delivery import signed_headers
from app.services.webhooks.endpoints import new_secret

ROOT = Path(__file__).resolve().parent.parent
BODY = json.dumps({"type": "feedback.created", "timestamp": "2026-11-26T10:00:00Z", "data": {"id": 42}})


def example(language: str) -> str:
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Webhooks") : text.index("## Notifications and receipts")]
    return re.findall(rf"```{language}\n(.*?)```", section, re.S)[0]


def signed(secret: str, previous: str | None = None) -> dict[str, str]:
    now = datetime.now(UTC)
    endpoint = EndpointRow(
        1, 1, None, "https://example.com/hooks", "", ("feedback.created",), False, "standard", True,
        secret, previous, now.replace(year=now.year + 1) if previous else None, None, "", None, now, now,
    )  # fmt: skip
    return signed_headers(endpoint, "msg_2mJ7sVbq", BODY, now)


def run_python(secrets: list[str], headers: dict[str, str], tmp_path: Path) -> str:
    script = example("python").replace(
        'SECRETS = ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"]', f"SECRETS = {secrets!r}"
    )
    script += f"\nprint(verify({BODY.encode()!r}, {headers!r}))\n"
    (tmp_path / "verify.py").write_text(script)
    return subprocess.run(
        [sys.executable, str(tmp_path / "verify.py")], capture_output=True, text=True, check=True, timeout=30
    ).stdout.strip()


def run_node(secret: str, headers: dict[str, str], tmp_path: Path) -> str:
    script = example("js") + (
        f"\nconsole.log(JSON.stringify(verify({json.dumps(secret)}, Buffer.from({json.dumps(BODY)}), "
        f"{json.dumps(headers)})));\n"
    )
    (tmp_path / "verify.js").write_text(script)
    return subprocess.run(
        ["node", str(tmp_path / "verify.js")], capture_output=True, text=True, check=True, timeout=30
    ).stdout.strip()


def test_the_python_example_verifies_an_earful_delivery(tmp_path):
    secret = new_secret()

    assert run_python([secret], signed(secret), tmp_path) == str(json.loads(BODY))
    assert run_python([new_secret()], signed(secret), tmp_path) == "None"


def test_the_python_example_verifies_with_either_secret_during_a_rotation(tmp_path):
    old, new = new_secret(), new_secret()
    headers = signed(new, previous=old)

    assert run_python([old], headers, tmp_path) == str(json.loads(BODY))
    assert run_python([new], headers, tmp_path) == str(json.loads(BODY))


def test_the_node_example_verifies_an_earful_delivery(tmp_path):
    secret = new_secret()
    headers = {name.lower(): value for name, value in signed(secret).items()}

    assert json.loads(run_node(secret, headers, tmp_path)) == json.loads(BODY)
    assert run_node(new_secret(), headers, tmp_path) == "null"
    rotated = {name.lower(): value for name, value in signed(new_secret(), previous=secret).items()}
    assert json.loads(run_node(secret, rotated, tmp_path)) == json.loads(BODY)
