"""Schemathesis against a live ``earful serve``: no server error, every answer as /openapi.json says.

The server runs with real data in place (a team-plan agent, an application with tagged threads,
a reply, a note, an attachment, an archived thread), and the fuzzer gets the token, the capture
key and the inbound secret, and the ids of that data besides random ones, so generated requests
reach real threads as well as unknown ids.

The operations that delete threads or webhooks get ids of their own (threads and webhooks kept
for them), so they delete real rows without taking the data the other operations read.
``deleteApplication`` is left out: schemathesis's coverage phase also tries the ids bound to
``application_id`` for every other operation, so it deleted the fuzzed application within seconds
and every later request saw none; its answers are checked against the document by every API test
instead (tests/openapi_check.py). The run fails if the fuzzed application did not survive it.

Invitations: the organization has pending invitations; ``revokeInvitation`` gets ids of its own.
``bulkFeedback`` gets an application of its own ("Bulk target", with threads of its own): with
``filters`` it may delete or mark as spam every thread it matches.
Saved replies: the application and the organization each have saved replies (with placeholders),
and their deletions get doomed ones of their own, as the webhooks' do.

Webhooks: the fuzzed user also owns an organization; the application and the organization each
have a webhook with a delivery (a test event), whose ids the fuzzer gets. The server runs with
EARFUL_WEBHOOK_ALLOW_PRIVATE=1 so that these webhooks can post to the server itself on loopback
(an address that answers 404: their deliveries fail, are logged and retried). Generated URLs
mostly name hosts that do not resolve, which the address check refuses with a documented 400;
those that pass are saved, and the server may post events to them.

    python -m tests.contract.fuzzing                       # SQLite, the seed of schemathesis.toml
    python -m tests.contract.fuzzing --seed random         # a new seed each run (printed)
    python -m tests.contract.fuzzing --database-url postgres://postgres@127.0.0.1:5432/postgres

With a PostgreSQL URL it works in a throwaway database of that server. ``make fuzz`` runs it on
SQLite and, when ``EARFUL_TEST_POSTGRES_URL`` is set, on PostgreSQL; CI runs it with the fixed seed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.browser.live import LiveSite, live_site

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "schemathesis.toml"
ST = Path(sys.executable).parent / "st"
INBOUND_SECRET = "fuzzing-inbound-secret-0123456789"
DOOMED_THREADS = 6
# Seconds of fuzzing per database: a few minutes of CI in all, with the seed of schemathesis.toml.
FUZZ_SECONDS = int(os.environ.get("EARFUL_FUZZ_SECONDS", "75"))
DOOMED_WEBHOOKS = 3
DOOMED_INVITATIONS = 3
DOOMED_SAVED_REPLIES = 3
# Operations that delete what they are given, and the dictionary of ids each gets instead.
DESTRUCTIVE = (
    ("deleteFeedback", "path.feedback_id", "doomed_threads"),
    ("markFeedbackAsSpam", "path.feedback_id", "doomed_threads"),
    ("deleteApplicationWebhook", "path.webhook_id", "doomed_webhooks"),
    ("deleteOrganizationWebhook", "path.webhook_id", "doomed_webhooks"),
    ("revokeInvitation", "path.invitation_id", "doomed_invitations"),
    ("bulkFeedback", "path.application_id", "doomed_applications"),
    ("deleteApplicationSavedReply", "path.saved_reply_id", "doomed_saved_replies"),
    ("deleteOrganizationSavedReply", "path.saved_reply_id", "doomed_saved_replies"),
)
PASSWORD = "fuzzing-password-123"


def seed_data(site: LiveSite) -> dict[str, Any]:
    """Put the data in place through the CLI and the APIs; returns what the fuzzer is given."""
    token = site.create_agent("fuzz@example.com", "Fuzz Agent", PASSWORD, plan="team")
    application = site.create_application(token, name="Fuzzed", url="https://fuzzed.example")
    attachment = site.upload(application, "notes.txt", b"fuzzing attachment\n", "text/plain")
    for number, sentiment in enumerate(("positive", "negative", "neutral")):
        site.submit(
            application,
            email=f"customer{number}@example.com",
            name=f"Customer {number}",
            message=f"Feedback number {number} about the export button",
            sentiment=sentiment,
            tags=["billing", "export"][: number + 1],
            properties={"plan": "pro", "seats": number},
            nps=number * 4,
            attachments=[attachment] if number == 0 else [],
        )
    threads = site.api_get(token, f"/applications/{application['id']}/feedback")["data"]
    newest, oldest = threads[0]["id"], threads[-1]["id"]
    for number in range(DOOMED_THREADS):
        site.submit(application, email=f"spammer{number}@example.net", message=f"Buy now, offer {number}")
    doomed = site.api_get(token, f"/applications/{application['id']}/feedback?limit={DOOMED_THREADS}")["data"]
    site.reply(token, application["id"], oldest, "Thanks, we are on it.")
    site.reply(token, application["id"], oldest, "Internal: check the billing export.", kind="note")
    archived = site.http.patch(
        f"{site.base_url}/applications/{application['id']}/feedback/{newest}",
        headers={"Authorization": f"Bearer {token}"},
        json={"archived": True},
    )
    archived.raise_for_status()
    files = site.api_get(token, f"/applications/{application['id']}/feedback/{oldest}")["data"]["attachments"]
    capability = re.search(r"/files/attachments/(\d+)/([^/]+)/(.+)$", files[0]["url"]) if files else None
    organization = json.loads(
        site.cli("org", "create", "--name", "Fuzzed Inc", "--owner", "fuzz@example.com")
    )
    hooks = seed_webhooks(
        site,
        token,
        [f"/applications/{application['id']}/webhooks", f"/organizations/{organization['id']}/webhooks"],
    )
    invited = [
        site.http.post(
            f"{site.base_url}/organizations/{organization['id']}/invitations",
            headers={"Authorization": f"Bearer {token}"},
            json={"email": f"invited{number}@example.com"},
        )
        for number in range(1 + DOOMED_INVITATIONS)
    ]
    for response in invited:
        response.raise_for_status()
    invitation_ids = [response.json()["data"]["id"] for response in invited]
    target = site.create_application(token, name="Bulk target")
    for number in range(DOOMED_THREADS):
        site.submit(target, email=f"bulk{number}@example.com", message=f"Bulk target number {number}")
    saved = seed_saved_replies(
        site,
        token,
        [
            f"/applications/{application['id']}/saved-replies",
            f"/organizations/{organization['id']}/saved-replies",
        ],
    )
    return {
        "token": token,
        "key": application["keys"]["javascript"],
        "invitation_ids": invitation_ids[:1],
        "doomed_invitation_ids": invitation_ids[1:],
        "doomed_application_ids": [target["id"]],
        "application_id": application["id"],
        "organization_id": organization["id"],
        "feedback_ids": [thread["id"] for thread in threads],
        "doomed_feedback_ids": [thread["id"] for thread in doomed],
        "attachment": capability.groups() if capability else None,
        **hooks,
        **saved,
    }


def seed_saved_replies(site: LiveSite, token: str, lists: list[str]) -> dict[str, list[int]]:
    """Under each list of saved replies, one kept and DOOMED_SAVED_REPLIES for the deletions."""
    headers = {"Authorization": f"Bearer {token}"}
    found: dict[str, list[int]] = {"saved_reply_ids": [], "doomed_saved_reply_ids": []}
    for path in lists:
        made = []
        for number in range(1 + DOOMED_SAVED_REPLIES):
            response = site.http.post(
                f"{site.base_url}{path}",
                headers=headers,
                json={"title": f"Answer {number}", "text": "Hi {name}, about {application}: {unknown}"},
            )
            response.raise_for_status()
            made.append(response.json()["data"]["id"])
        kept, *doomed = made
        found["saved_reply_ids"].append(kept)
        found["doomed_saved_reply_ids"] += doomed
    return found


def seed_webhooks(site: LiveSite, token: str, lists: list[str]) -> dict[str, list[int]]:
    """Under each list of webhooks, one webhook with a test event's delivery, and DOOMED_WEBHOOKS
    for the deleting operations. They post to the server itself (an address that answers 404),
    so their deliveries fail, are logged and retried, and never leave the machine."""
    headers = {"Authorization": f"Bearer {token}"}
    found: dict[str, list[int]] = {"webhook_ids": [], "delivery_ids": [], "doomed_webhook_ids": []}
    for path in lists:
        made = []
        for number in range(1 + DOOMED_WEBHOOKS):
            response = site.http.post(
                f"{site.base_url}{path}",
                headers=headers,
                json={"url": f"{site.base_url}/fuzzing/webhook-{number}", "description": f"Fuzzed {number}"},
            )
            response.raise_for_status()
            made.append(response.json()["data"]["id"])
        kept, *doomed = made
        tested = site.http.post(f"{site.base_url}{path}/{kept}/test", headers=headers)
        tested.raise_for_status()
        found["webhook_ids"].append(kept)
        found["delivery_ids"].append(tested.json()["data"]["id"])
        found["doomed_webhook_ids"] += doomed
    return found


def write_config(folder: Path, data: dict[str, Any], seed: int | None) -> Path:
    """The committed settings plus the live data's ids, as dictionaries the fuzzer draws from."""
    text = CONFIG.read_text()
    if seed is not None:
        text = re.sub(r"(?m)^seed = \d+$", f"seed = {seed}", text)
    ids = {
        "applications": [data["application_id"]],
        "organizations": [data["organization_id"]],
        "threads": data["feedback_ids"],
        "webhooks": data["webhook_ids"],
        "deliveries": data["delivery_ids"],
        "invitations": data["invitation_ids"],
        "saved_replies": data["saved_reply_ids"],
    }
    parameters = {
        "path.application_id": "applications",
        "path.organization_id": "organizations",
        "path.feedback_id": "threads",
        "query.feedback_id": "threads",
        "path.webhook_id": "webhooks",
        "path.delivery_id": "deliveries",
        "path.invitation_id": "invitations",
        "path.saved_reply_id": "saved_replies",
    }
    if data["attachment"]:
        attachment_id, token, name = data["attachment"]
        ids |= {"attachments": [int(attachment_id)]}
        text += f'\n[dictionaries.tokens]\nvalues = ["{token}"]\n[dictionaries.names]\nvalues = ["{name}"]\n'
        parameters |= {"path.attachment_id": "attachments", "path.token": "tokens", "path.name": "names"}
    ids |= {
        "doomed_threads": data["doomed_feedback_ids"],
        "doomed_webhooks": data["doomed_webhook_ids"],
        "doomed_invitations": data["doomed_invitation_ids"],
        "doomed_applications": data["doomed_application_ids"],
        "doomed_saved_replies": data["doomed_saved_reply_ids"],
    }
    for name, values in ids.items():
        text += f"\n[dictionaries.{name}]\nvalues = {values}\n"
    text += "\n[parameters]\n" + "".join(
        f'"{key}" = {{ dictionary = "{dictionary}", probability = 0.7 }}\n'
        for key, dictionary in parameters.items()
    )
    text += '\n[[operations]]\ninclude-operation-id = "deleteApplication"\nenabled = false\n'
    for operation_id, key, dictionary in DESTRUCTIVE:
        text += (
            f'\n[[operations]]\ninclude-operation-id = "{operation_id}"\n'
            f'parameters = {{ "{key}" = {{ dictionary = "{dictionary}", probability = 1.0 }} }}\n'
        )
    path = folder / "schemathesis.toml"
    path.write_text(text)
    return path


@contextmanager
def database(url: str | None) -> Iterator[dict[str, str]]:
    """The server's database settings: SQLite in its data dir, or a throwaway PostgreSQL database."""
    if url is None:
        yield {}
        return
    from tests.conftest import POSTGRES_ENV, create_postgres_database, drop_postgres_database

    os.environ[POSTGRES_ENV] = url
    created = asyncio.run(create_postgres_database("earful_fuzz"))
    try:
        yield {"EARFUL_DATABASE_URL": created}
    finally:
        asyncio.run(drop_postgres_database(created))


def run(database_url: str | None, seed: int | None, max_time: int) -> int:
    """Serve, put the data in place, fuzz; the fuzzer's exit status (0: nothing found)."""
    with tempfile.TemporaryDirectory() as scratch, database(database_url) as settings:
        folder = Path(scratch)
        with live_site(
            folder / "data",
            EARFUL_INBOUND_SECRET=INBOUND_SECRET,
            EARFUL_WEBHOOK_ALLOW_PRIVATE="1",
            **settings,
        ) as site:
            data = seed_data(site)
            config = write_config(folder, data, seed)
            env = {
                **os.environ,
                "EARFUL_FUZZ_TOKEN": data["token"],
                "EARFUL_FUZZ_CAPTURE_KEY": data["key"],
                "EARFUL_FUZZ_INBOUND_SECRET": INBOUND_SECRET,
            }
            command = [
                str(ST),
                "--config-file",
                str(config),
                "run",
                f"{site.base_url}/openapi.json",
                "--max-time",
                str(max_time),
                "--no-color",
            ]
            # In the scratch folder: schemathesis writes .hypothesis/ and .schemathesis/ where it runs.
            result = subprocess.run(command, env=env, cwd=folder, capture_output=True, text=True, check=False)
            print(result.stdout[-20000:], result.stderr[-5000:], sep="\n")
            if result.returncode != 0:
                print((folder / "data" / "serve.log").read_text()[-10000:])
                return result.returncode
            survived = site.http.get(
                f"{site.base_url}/applications/{data['application_id']}",
                headers={"Authorization": f"Bearer {data['token']}"},
            )
            if survived.status_code != 200:
                print("the fuzzed application was deleted during the run: the later operations saw none")
                return 1
            return 0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--database-url", help="a PostgreSQL server to fuzz against (default: SQLite)")
    parser.add_argument("--seed", default=None, help="an integer, or 'random' (default: schemathesis.toml's)")
    parser.add_argument("--max-time", type=int, default=90, help="seconds of fuzzing (default 90)")
    arguments = parser.parse_args()
    seed = None
    if arguments.seed == "random":
        seed = random.randrange(2**32)
        print(f"seed {seed}")
    elif arguments.seed is not None:
        seed = int(arguments.seed)
    return run(arguments.database_url, seed, arguments.max_time)


if __name__ == "__main__":
    sys.exit(main())
