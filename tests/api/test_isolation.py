"""Tenant isolation: a user sees and changes only the applications of their own organizations.

User A owns an application in A's organization (team plan) with threads, tags, replies and a
note. User B has a token with read and write and an application of their own. Whatever B asks
about A's data is answered exactly as for an id that does not exist, and nothing of A changes.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, replace
from io import BytesIO
from typing import Any

import pytest
from werkzeug.datastructures import FileStorage

from app.models import (
    Application,
    Attachment,
    Feedback,
    Invitation,
    Membership,
    NotificationSetting,
    Organization,
    Reply,
    SavedReply,
    Tag,
    User,
    WebhookAttempt,
    WebhookDelivery,
    WebhookEndpoint,
)
from app.repositories import webhooks
from app.services import invitations
from app.services.organizations import add_member
from app.services.webhooks import endpoints
from app.services.webhooks.delivery import Sender, deliver_due
from tests.conftest import PLAIN_DEPLOYMENT
from tests.factories import (
    body_json,
    body_text,
    make_application,
    make_organization,
    make_reply,
    make_saved_reply,
    make_thread,
    make_token,
    make_user,
)


@dataclass
class World:
    alice: User
    alice_token: str
    alice_organization: Organization
    alice_app: Application
    alice_thread: Feedback
    alice_reply: Reply
    bob: User
    bob_token: str
    bob_organization: Organization
    bob_app: Application
    bob_thread: Feedback
    alice_webhooks: dict[str, tuple[int, int]]  # per owner (app, org): a webhook and its delivery
    alice_invitation: int
    alice_saved_replies: dict[str, int]  # per owner (app, org): a saved reply

    def ids(self) -> dict[str, int]:
        return {
            "alice_app": self.alice_app.id,
            "alice_thread": self.alice_thread.id,
            "alice_organization": self.alice_organization.id,
            "bob_app": self.bob_app.id,
            "alice_webhook": self.alice_webhooks["app"][0],
            "alice_delivery": self.alice_webhooks["app"][1],
            "alice_org_webhook": self.alice_webhooks["org"][0],
            "alice_org_delivery": self.alice_webhooks["org"][1],
            "alice_invitation": self.alice_invitation,
            "alice_saved_reply": self.alice_saved_replies["app"],
            "alice_org_saved_reply": self.alice_saved_replies["org"],
        }


async def make_webhook(alice: User, scope: endpoints.Scope) -> tuple[int, int]:
    """A disabled webhook (nothing is ever sent) with one delivery, failed at once by the worker:
    nothing of it changes afterwards."""
    hooks = replace(PLAIN_DEPLOYMENT, webhook_allow_private=True)
    endpoint, _ = await endpoints.create_endpoint(
        alice, scope, {"url": "http://127.0.0.1:9/alice", "enabled": False}, hooks
    )
    delivery = await endpoints.send_test_event(scope, endpoint)
    sender = Sender(False)
    try:
        for _ in range(500):
            row = await webhooks.delivery_by_id(delivery.id)
            if row is not None and row.status == "failed":
                return endpoint.id, delivery.id
            await deliver_due(hooks, sender)  # the app's worker, when it runs, may have it
            await asyncio.sleep(0.01)
    finally:
        await sender.close()
    raise AssertionError(f"the delivery of a disabled webhook was not failed: {row}")


@pytest.fixture
async def world(db: str) -> World:
    alice = await make_user(email="alice@example.com", name="Alice", plan="team")
    alice_organization = await make_organization(alice, name="Alice Inc", plan="team")
    alice_app = await make_application(
        alice, name="Alice App", url="https://alice.example.com", organization_id=alice_organization.id
    )
    alice_thread = await make_thread(alice_app, tags="billing,export", message="Alice's customer writes.")
    await make_thread(alice_app, tags="billing", message="Another customer of Alice writes.")
    alice_reply = await make_reply(alice, alice_app, alice_thread, "We are on it.")
    await make_reply(alice, alice_app, alice_thread, "Internal: check the logs.", type="note")

    bob = await make_user(email="bob@example.com", name="Bob")
    bob_organization = await make_organization(bob, name="Bob Ltd")
    bob_app = await make_application(bob, name="Bob App")
    bob_thread = await make_thread(bob_app, tags="bobs-tag", message="Bob's customer writes.")
    await make_reply(bob, bob_app, bob_thread, "Bob answers.")
    alice_webhooks = {
        "app": await make_webhook(alice, await endpoints.application_scope(alice, alice_app)),
        "org": await make_webhook(alice, await endpoints.organization_scope(alice, alice_organization.id)),
    }
    invited = await invitations.invite(alice, alice_organization, "dora@example.com")
    alice_saved_replies = {
        "app": (await make_saved_reply(alice, alice_app, title="Alice's answer")).id,
        "org": (await make_saved_reply(alice, organization=alice_organization, title="Alice Inc's")).id,
    }
    return World(
        alice=alice,
        alice_token=await make_token(alice, "read", "write"),
        alice_organization=alice_organization,
        alice_app=alice_app,
        alice_thread=alice_thread,
        alice_reply=alice_reply,
        bob=bob,
        bob_token=await make_token(bob, "read", "write"),
        bob_organization=bob_organization,
        bob_app=bob_app,
        bob_thread=bob_thread,
        alice_webhooks=alice_webhooks,
        alice_invitation=invited.invitation.id,
        alice_saved_replies=alice_saved_replies,
    )


async def snapshot_of_alice(world: World) -> dict[str, Any]:
    """Everything stored about Alice's application, to show that nothing of it changed."""
    application_id = world.alice_app.id
    return {
        "applications": await Application.filter(owner_id=world.alice.id).order_by("id").values(),
        "organizations": await Organization.filter(id=world.alice_organization.id).values(),
        "threads": await Feedback.filter(application_id=application_id).order_by("id").values(),
        "replies": await Reply.filter(application_id=application_id).order_by("id").values(),
        "tags": await Tag.filter(application_id=application_id).order_by("id").values(),
        "attachments": await Attachment.filter(application_id=application_id).order_by("id").values(),
        "webhooks": await WebhookEndpoint.all().order_by("id").values(),
        "deliveries": await WebhookDelivery.all().order_by("id").values(),
        "attempts": await WebhookAttempt.all().order_by("id").values(),
        "notification settings": await NotificationSetting.all().order_by("id").values(),
        "invitations": await Invitation.all().order_by("id").values(),
        "memberships": await Membership.all().order_by("id").values(),
        "saved replies": await SavedReply.all().order_by("id").values(),
    }


async def send(api, method: str, path: str, token: str, body: dict[str, Any] | None, world: World):
    """One management API request; ``path`` is a template over ``World.ids``."""
    url = path.format(**world.ids())
    kwargs: dict[str, Any] = {}
    if body is not None:
        kwargs["form" if method in ("post", "put") and "/feedback/" not in path else "json"] = body
    return await getattr(api, method)(url, token, **kwargs)


APPLICATION_ENDPOINTS = [
    pytest.param("get", "/applications/{alice_app}", None, id="show application"),
    pytest.param("post", "/applications/{alice_app}", {"name": "Taken over"}, id="update application (POST)"),
    pytest.param("put", "/applications/{alice_app}", {"name": "Taken over"}, id="update application (PUT)"),
    pytest.param("get", "/applications/{alice_app}/feedback", None, id="list feedback"),
    pytest.param(
        "get", "/applications/{alice_app}/feedback?archived=true", None, id="list archived feedback"
    ),
    pytest.param("get", "/applications/{alice_app}/feedback/{alice_thread}", None, id="show feedback"),
    pytest.param(
        "patch",
        "/applications/{alice_app}/feedback/{alice_thread}",
        {"archived": True},
        id="archive feedback",
    ),
    pytest.param(
        "patch",
        "/applications/{alice_app}/feedback/{alice_thread}",
        {"assignee_id": None},
        id="unassign feedback",
    ),
    pytest.param(
        "post",
        "/applications/{alice_app}/feedback/{alice_thread}/replies",
        {"message": "Hello from Bob"},
        id="reply to feedback",
    ),
    pytest.param(
        "post",
        "/applications/{alice_app}/feedback/{alice_thread}/replies",
        {"message": "Bob's note", "type": "note"},
        id="add note to feedback",
    ),
    pytest.param(
        "post",
        "/applications/{alice_app}/feedback/bulk",
        {"action": "untag", "tag": "no-such-tag", "filters": {}},
        id="bulk action",
    ),
    pytest.param("get", "/applications/{alice_app}/tags", None, id="list tags"),
    pytest.param("get", "/applications/{alice_app}/replies", None, id="list replies"),
    pytest.param("get", "/applications/{alice_app}/notifications", None, id="show notification settings"),
    pytest.param(
        "put", "/applications/{alice_app}/notifications", {"mode": "none"}, id="choose notifications"
    ),
    *(
        pytest.param(method, "/applications/{alice_app}/webhooks" + suffix, body, id=f"{name} (application)")
        for method, suffix, body, name in [
            ("get", "", None, "list webhooks"),
            ("get", "/{alice_webhook}", None, "show webhook"),
            ("patch", "/{alice_webhook}", {"description": "Taken over"}, "change webhook"),
            ("post", "/{alice_webhook}/rotate-secret", None, "rotate webhook secret"),
            ("get", "/{alice_webhook}/deliveries", None, "list webhook deliveries"),
            ("get", "/{alice_webhook}/deliveries/{alice_delivery}", None, "show webhook delivery"),
        ]
    ),
    *(
        pytest.param(method, "/applications/{alice_app}" + suffix, body, id=f"{name} (application)")
        for method, suffix, body, name in [
            ("get", "/saved-replies", None, "list saved replies"),
            ("get", "/saved-replies/{alice_saved_reply}", None, "show saved reply"),
            ("patch", "/saved-replies/{alice_saved_reply}", {"title": "Taken over"}, "change saved reply"),
            ("get", "/feedback/{alice_thread}/saved-replies/{alice_saved_reply}", None, "fill saved reply"),
            ("get", "/feedback/{alice_thread}/saved-replies/{alice_org_saved_reply}", None, "fill org reply"),
        ]
    ),
]

# What answers the owner otherwise than 200, under an application and under an organization
# (``{owner}``); the deletion comes last.
WEBHOOK_ACTIONS = [
    ("post", "", {"url": "https://93.184.215.14/hook", "enabled": "false"}, 201, "create webhook"),
    ("post", "/{webhook}/test", None, 202, "send a test event"),
    ("post", "/{webhook}/deliveries/{delivery}/resend", None, 202, "resend a delivery"),
    ("delete", "/{webhook}", None, 204, "delete webhook"),
]
OWNERS = {
    "application": ("/applications/{alice_app}/webhooks", "{alice_webhook}", "{alice_delivery}"),
    "organization": (
        "/organizations/{alice_organization}/webhooks",
        "{alice_org_webhook}",
        "{alice_org_delivery}",
    ),
}


def webhook_path(owner: str, suffix: str) -> str:
    prefix, webhook, delivery = OWNERS[owner]
    return prefix + suffix.replace("{webhook}", webhook).replace("{delivery}", delivery)


ORGANIZATION_ENDPOINTS = [
    pytest.param(method, webhook_path("organization", suffix), body, id=f"{name} (organization)")
    for method, suffix, body, name in [
        ("get", "", None, "list webhooks"),
        ("get", "/{webhook}", None, "show webhook"),
        ("patch", "/{webhook}", {"description": "Taken over"}, "change webhook"),
        ("post", "/{webhook}/rotate-secret", None, "rotate webhook secret"),
        ("get", "/{webhook}/deliveries", None, "list webhook deliveries"),
        ("get", "/{webhook}/deliveries/{delivery}", None, "show webhook delivery"),
    ]
] + [
    pytest.param(method, "/organizations/{alice_organization}/saved-replies" + suffix, body, id=name)
    for method, suffix, body, name in [
        ("get", "", None, "list saved replies (organization)"),
        ("get", "/{alice_org_saved_reply}", None, "show saved reply (organization)"),
        ("patch", "/{alice_org_saved_reply}", {"text": "Taken over"}, "change saved reply (organization)"),
    ]
]
ORGANIZATION_ENDPOINTS.append(
    pytest.param("get", "/organizations/{alice_organization}/invitations", None, id="list invitations")
)
INVITATION_ACTIONS = [
    pytest.param(
        "post",
        "/organizations/{alice_organization}/invitations",
        {"email": "eve@example.com"},
        201,
        id="invite",
    ),
    pytest.param(
        "delete", "/organizations/{alice_organization}/invitations/{alice_invitation}", None, 204, id="revoke"
    ),
]
WEBHOOK_ACTION_PARAMS = [
    pytest.param(owner, method, webhook_path(owner, suffix), body, status, id=f"{name} ({owner})")
    for owner in OWNERS
    for method, suffix, body, status, name in WEBHOOK_ACTIONS
]

FOREIGN_FEEDBACK_ENDPOINTS = [
    pytest.param("get", "/applications/{bob_app}/feedback/{alice_thread}", None, id="show feedback"),
    pytest.param(
        "patch", "/applications/{bob_app}/feedback/{alice_thread}", {"archived": True}, id="archive feedback"
    ),
    pytest.param(
        "post",
        "/applications/{bob_app}/feedback/{alice_thread}/replies",
        {"message": "Hello from Bob"},
        id="reply to feedback",
    ),
    pytest.param(
        "get",
        "/applications/{bob_app}/feedback/{alice_thread}/saved-replies/{alice_saved_reply}",
        None,
        id="fill saved reply",
    ),
]


@pytest.mark.parametrize(("method", "path", "body"), APPLICATION_ENDPOINTS)
async def test_owner_may_use_every_application_endpoint(api, world, method, path, body):
    response = await send(api, method, path, world.alice_token, body, world)

    assert response.status_code == 200
    assert "data" in await body_json(response)


@pytest.mark.parametrize(("method", "path", "body"), APPLICATION_ENDPOINTS)
async def test_another_users_application_is_an_invalid_application(api, world, method, path, body):
    before = await snapshot_of_alice(world)

    response = await send(api, method, path, world.bob_token, body, world)

    assert response.status_code == 404
    assert response.mimetype == "text/plain"
    assert await body_text(response) == "Invalid application"
    assert await snapshot_of_alice(world) == before


@pytest.mark.parametrize(("method", "path", "body"), FOREIGN_FEEDBACK_ENDPOINTS)
async def test_another_applications_feedback_is_invalid_feedback(api, world, method, path, body):
    before = await snapshot_of_alice(world)

    response = await send(api, method, path, world.bob_token, body, world)

    assert response.status_code == 404
    assert response.mimetype == "text/plain"
    assert await body_text(response) == "Invalid feedback"
    assert await snapshot_of_alice(world) == before


@pytest.mark.parametrize(("method", "path", "body"), ORGANIZATION_ENDPOINTS)
async def test_owner_may_use_every_organization_endpoint(api, world, method, path, body):
    response = await send(api, method, path, world.alice_token, body, world)

    assert response.status_code == 200
    assert "data" in await body_json(response)


@pytest.mark.parametrize(("method", "path", "body"), ORGANIZATION_ENDPOINTS)
async def test_another_users_organization_is_an_invalid_organization_everywhere(
    api, world, method, path, body
):
    before = await snapshot_of_alice(world)

    response = await send(api, method, path, world.bob_token, body, world)

    assert response.status_code == 404
    assert response.mimetype == "text/plain"
    assert await body_text(response) == "Invalid organization"
    assert await snapshot_of_alice(world) == before


@pytest.mark.parametrize(("owner", "method", "path", "body", "status"), WEBHOOK_ACTION_PARAMS)
async def test_owner_may_use_every_webhook_action(api, world, owner, method, path, body, status):
    response = await send(api, method, path, world.alice_token, body, world)

    assert response.status_code == status, await body_text(response)


@pytest.mark.parametrize(("owner", "method", "path", "body", "status"), WEBHOOK_ACTION_PARAMS)
async def test_another_users_webhooks_are_not_found(api, world, owner, method, path, body, status):
    before = await snapshot_of_alice(world)

    response = await send(api, method, path, world.bob_token, body, world)

    assert response.status_code == 404
    assert response.mimetype == "text/plain"
    assert await body_text(response) == f"Invalid {owner}"
    assert await snapshot_of_alice(world) == before


@pytest.mark.parametrize(("method", "path", "body", "status"), INVITATION_ACTIONS)
async def test_owner_may_use_every_invitation_action(api, world, method, path, body, status):
    response = await send(api, method, path, world.alice_token, body, world)

    assert response.status_code == status, await body_text(response)


@pytest.mark.parametrize(("method", "path", "body", "status"), INVITATION_ACTIONS)
async def test_another_users_invitations_are_not_found(api, world, method, path, body, status):
    before = await snapshot_of_alice(world)

    response = await send(api, method, path, world.bob_token, body, world)

    assert response.status_code == 404
    assert response.mimetype == "text/plain"
    assert await body_text(response) == "Invalid organization"
    assert await snapshot_of_alice(world) == before


async def test_another_organizations_invitation_is_not_found_under_ones_own(api, world):
    before = await snapshot_of_alice(world)

    response = await api.delete(
        f"/organizations/{world.bob_organization.id}/invitations/{world.alice_invitation}", world.bob_token
    )

    assert response.status_code == 404
    assert await body_text(response) == "Invalid invitation"
    assert await snapshot_of_alice(world) == before


async def test_own_webhook_lists_show_nothing_of_others(api, world):
    for path in (
        f"/applications/{world.bob_app.id}/webhooks",
        f"/organizations/{world.bob_organization.id}/webhooks",
    ):
        response = await api.get(path, world.bob_token)

        assert response.status_code == 200
        assert (await body_json(response))["data"] == []


async def test_foreign_thread_stays_unarchived_when_another_user_archives_it(api, world):
    await send(
        api,
        "patch",
        "/applications/{alice_app}/feedback/{alice_thread}",
        world.bob_token,
        {"archived": True},
        world,
    )

    response = await api.get(
        f"/applications/{world.alice_app.id}/feedback/{world.alice_thread.id}", world.alice_token
    )
    assert (await body_json(response))["data"]["archived"] is False


async def test_foreign_thread_gets_no_reply_from_another_user(api, world):
    await send(
        api,
        "post",
        "/applications/{alice_app}/feedback/{alice_thread}/replies",
        world.bob_token,
        {"message": "Hello from Bob"},
        world,
    )

    assert not await Reply.exists(user_id=world.bob.id, feedback_id=world.alice_thread.id)
    assert not await Reply.exists(message="Hello from Bob")


async def test_application_list_excludes_other_users_applications(api, world):
    response = await api.get("/applications", world.bob_token)

    assert response.status_code == 200
    assert [a["id"] for a in (await body_json(response))["data"]] == [world.bob_app.id]


async def test_own_lists_show_nothing_of_other_applications(api, world):
    feedback = await body_json(await api.get(f"/applications/{world.bob_app.id}/feedback", world.bob_token))
    replies = await body_json(await api.get(f"/applications/{world.bob_app.id}/replies", world.bob_token))
    tags = await body_json(await api.get(f"/applications/{world.bob_app.id}/tags", world.bob_token))

    assert [t["id"] for t in feedback["data"]] == [world.bob_thread.id]
    assert feedback["pagination"]["total"] == 1
    assert [r["feedback_id"] for r in replies["data"]] == [world.bob_thread.id]
    assert replies["pagination"]["total"] == 1
    assert [t["name"] for t in tags["data"]] == ["bobs-tag"]


async def test_organization_list_excludes_organizations_the_user_does_not_belong_to(api, world):
    response = await api.get("/organizations", world.bob_token)

    assert response.status_code == 200
    assert [o["id"] for o in (await body_json(response))["data"]] == [world.bob_organization.id]


async def test_another_organization_is_an_invalid_organization(api, world):
    response = await api.get(f"/organizations/{world.alice_organization.id}", world.bob_token)

    assert response.status_code == 404
    assert response.mimetype == "text/plain"
    assert await body_text(response) == "Invalid organization"


@pytest.mark.parametrize("encoding", ["form", "json"])
async def test_application_cannot_be_created_in_another_users_organization(api, world, encoding):
    fields = {"name": "Sneaky", "organization_id": str(world.alice_organization.id)}

    response = await api.post("/applications", world.bob_token, **{encoding: fields})

    assert response.status_code == 404
    assert response.mimetype == "text/plain"
    assert await body_text(response) == "Invalid organization"
    assert not await Application.exists(name="Sneaky")


async def test_application_cannot_be_moved_into_another_users_organization(api, world):
    response = await api.put(
        f"/applications/{world.bob_app.id}",
        world.bob_token,
        form={"organization_id": str(world.alice_organization.id)},
    )

    assert response.status_code == 404
    assert await body_text(response) == "Invalid organization"
    assert (await Application.get(id=world.bob_app.id)).organization_id is None


@pytest.fixture
async def member_token(world: World) -> str:
    """A read and write token of Carol, a member of Alice's organization (and of one of her own)."""
    carol = await make_user(email="carol@example.com", name="Carol")
    await make_organization(carol, name="Carol's own")
    await add_member(world.alice_organization, carol)
    return await make_token(carol, "read", "write")


async def test_organization_member_sees_the_organizations_application(api, world, member_token):
    listed = await body_json(await api.get("/applications", member_token))
    shown = await api.get(f"/applications/{world.alice_app.id}", member_token)
    threads = await body_json(await api.get(f"/applications/{world.alice_app.id}/feedback", member_token))

    assert [a["id"] for a in listed["data"]] == [world.alice_app.id]
    assert shown.status_code == 200
    assert (await body_json(shown))["data"]["organization_id"] == world.alice_organization.id
    assert world.alice_thread.id in [t["id"] for t in threads["data"]]


async def test_organization_member_may_reply_to_the_organizations_feedback(api, world, member_token):
    response = await api.post(
        f"/applications/{world.alice_app.id}/feedback/{world.alice_thread.id}/replies",
        member_token,
        json={"message": "Carol helps out."},
    )

    assert response.status_code == 200
    assert "Carol helps out." in [r["message"] for r in (await body_json(response))["data"]["replies"]]


SAVED_REPLY_ACTIONS = [
    pytest.param(prefix + suffix, method, body, status, id=f"{name} ({owner})")
    for owner, prefix, item in [
        ("application", "/applications/{alice_app}/saved-replies", "{alice_saved_reply}"),
        ("organization", "/organizations/{alice_organization}/saved-replies", "{alice_org_saved_reply}"),
    ]
    for method, suffix, body, status, name in [
        ("post", "", {"title": "Planted", "text": "Hi {name}"}, 201, "create saved reply"),
        ("delete", "/" + item, None, 204, "delete saved reply"),
    ]
]


@pytest.mark.parametrize(("path", "method", "body", "status"), SAVED_REPLY_ACTIONS)
async def test_owner_may_create_and_delete_saved_replies(api, world, path, method, body, status):
    response = await send(api, method, path, world.alice_token, body, world)

    assert response.status_code == status, await body_text(response)


@pytest.mark.parametrize(("path", "method", "body", "status"), SAVED_REPLY_ACTIONS)
async def test_another_users_saved_replies_are_not_found(api, world, path, method, body, status):
    before = await snapshot_of_alice(world)

    response = await send(api, method, path, world.bob_token, body, world)

    assert response.status_code == 404
    assert await body_text(response) in ("Invalid application", "Invalid organization")
    assert await snapshot_of_alice(world) == before


async def test_a_saved_reply_of_another_application_is_not_filled_for_ones_own_thread(api, world):
    response = await api.get(
        f"/applications/{world.bob_app.id}/feedback/{world.bob_thread.id}/saved-replies/"
        f"{world.alice_saved_replies['app']}",
        world.bob_token,
    )

    assert response.status_code == 404
    assert await body_text(response) == "Invalid saved reply"


# Capture API -------------------------------------------------------------------------------


def upload_file() -> dict[str, FileStorage]:
    return {"file": FileStorage(BytesIO(b"hello"), filename="hello.txt", content_type="text/plain")}


@pytest.mark.parametrize("platform", ["javascript", "ios", "android", "api"])
@pytest.mark.parametrize("path", ["open", "upload", "submit"])
async def test_another_applications_key_is_not_authorized(client, world, path, platform):
    before = await snapshot_of_alice(world)
    key = getattr(world.bob_app, f"key_{platform}")
    kwargs: dict[str, Any] = {}
    if path == "upload":
        kwargs["files"] = upload_file()
    if path == "submit":
        kwargs["json"] = {"email": "mallory@example.org", "message": "Planted feedback."}

    response = await client.post(f"/applications/{world.alice_app.id}/{path}?key={key}", **kwargs)

    assert response.status_code == 403
    assert response.mimetype == "text/plain"
    assert await body_text(response) == "Not authorized"
    assert await snapshot_of_alice(world) == before


async def test_upload_of_another_application_cannot_be_attached(client, world):
    uploaded = await client.post(
        f"/applications/{world.bob_app.id}/upload?key={world.bob_app.key_api}", files=upload_file()
    )
    assert uploaded.status_code == 201
    attachment_ids = json.loads(await uploaded.get_data(as_text=True))
    threads_before = await Feedback.filter(application_id=world.alice_app.id).count()

    response = await client.post(
        f"/applications/{world.alice_app.id}/submit?key={world.alice_app.key_api}",
        json={
            "email": "mallory@example.org",
            "message": "Look at this file.",
            "attachments": attachment_ids,
        },
    )

    assert response.status_code == 400
    assert response.mimetype == "text/plain"
    assert await body_text(response) == "Invalid attachments"
    assert await Feedback.filter(application_id=world.alice_app.id).count() == threads_before
    attachment = await Attachment.get(id=attachment_ids[0])
    assert (attachment.application_id, attachment.feedback_id) == (world.bob_app.id, None)
