"""GET/POST /applications and GET/POST/PUT /applications/{id}, logos included."""

from __future__ import annotations

import re
import struct
import zlib
from datetime import UTC, datetime
from io import BytesIO

import pytest
from quart.datastructures import FileStorage

from app.db import atomic
from app.models import Application
from app.services.organizations import change_role, remove_member
from tests.api.conftest import ON_DISK_AND_IN_A_BUCKET
from tests.conftest import BASE_URL
from tests.factories import (
    body_json,
    body_text,
    make_application,
    make_organization,
    make_token,
    make_user,
)


def tiny_png() -> bytes:
    """A valid 1x1 PNG image."""

    def chunk(kind: bytes, payload: bytes) -> bytes:
        return (
            struct.pack(">I", len(payload))
            + kind
            + payload
            + struct.pack(">I", zlib.crc32(kind + payload) & 0xFFFFFFFF)
        )

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


def upload(content: bytes, filename: str) -> dict[str, FileStorage]:
    return {"logo": FileStorage(BytesIO(content), filename=filename)}


@pytest.fixture
async def owner(db: str):
    return await make_user(email="owner@example.com", name="Owner")


@pytest.fixture
async def token(owner) -> str:
    return await make_token(owner)


async def assert_error(response, status: int, message: str) -> None:
    assert response.status_code == status
    assert response.mimetype == "text/plain"
    assert await body_text(response) == message


async def data_of(response):
    assert response.status_code == 200, await body_text(response)
    return (await body_json(response))["data"]


async def create(api, token: str, **kwargs):
    """POST /applications and return the created application's JSON."""
    return await data_of(await api.post("/applications", token, **kwargs))


# Listing


async def test_list_returns_only_the_applications_the_user_may_see_ordered_by_id(api, owner, token):
    colleague = await make_user()
    stranger = await make_user()
    shared = await make_organization(colleague, owner)
    foreign = await make_organization(stranger)
    first = await make_application(owner)
    of_colleague = await make_application(colleague, organization_id=shared.id)
    await make_application(stranger)
    await make_application(stranger, organization_id=foreign.id)
    await make_application(colleague)
    last = await make_application(owner)

    response = await api.get("/applications", token)

    listed = await data_of(response)
    assert [a["id"] for a in listed] == [first.id, of_colleague.id, last.id]


async def test_list_is_empty_for_a_user_without_applications(api, token):
    await make_application(await make_user())

    response = await api.get("/applications", token)

    assert await body_json(response) == {"data": []}


# Creating


async def test_create_with_urlencoded_form_fields(api, token):
    created = await create(api, token, form={"name": "Web shop", "url": "https://shop.example.com/"})

    assert created["name"] == "Web shop"
    assert created["url"] == "https://shop.example.com/"
    shown = await data_of(await api.get(f"/applications/{created['id']}", token))
    assert shown == created


async def test_create_with_multipart_form_fields(api, token):
    created = await create(api, token, form={"name": "Mobile", "url": "http://mobile.example.com"}, files={})

    assert created["name"] == "Mobile"
    assert created["url"] == "http://mobile.example.com"
    assert created["logo"] is None


@ON_DISK_AND_IN_A_BUCKET
async def test_create_with_a_logo_serves_it_as_png(api, token):
    png = tiny_png()

    created = await create(api, token, form={"name": "With logo"}, files=upload(png, "logo.png"))

    assert created["logo"].startswith(f"{BASE_URL}/files/logos/{created['id']}/")
    logo = await api.client.get(created["logo"].removeprefix(BASE_URL))
    assert logo.status_code == 200
    assert logo.mimetype == "image/png"
    assert await logo.get_data() == png


@pytest.mark.parametrize("filename", ["notes.txt", "logo.png", "logo"])
async def test_create_with_a_logo_that_is_not_an_image_is_rejected(api, token, filename):
    response = await api.post(
        "/applications", token, form={"name": "Bad logo"}, files=upload(b"just some text\n", filename)
    )

    await assert_error(response, 400, "The logo field must be an image (PNG, JPEG, GIF or WebP).")
    assert await Application.all().count() == 0


@pytest.mark.parametrize("form", [{}, {"name": ""}, {"name": "   "}, {"url": "https://example.com"}])
async def test_create_without_name_is_rejected(api, token, form):
    response = await api.post("/applications", token, form=form)

    await assert_error(response, 400, "The name field is required.")
    assert await Application.all().count() == 0


@pytest.mark.parametrize(
    "url", ["not a url", "example.com", "ftp://example.com/", "javascript:alert(1)", "https://"]
)
async def test_create_with_an_invalid_url_is_rejected(api, token, url):
    response = await api.post("/applications", token, form={"name": "App", "url": url})

    await assert_error(response, 400, "The url field must be a valid URL.")


async def test_create_in_an_organization_the_user_does_not_belong_to_is_invalid_organization(api, token):
    foreign = await make_organization(await make_user())

    response = await api.post(
        "/applications", token, form={"name": "App", "organization_id": str(foreign.id)}
    )

    await assert_error(response, 404, "Invalid organization")
    assert await Application.all().count() == 0


async def test_create_in_an_unknown_organization_is_invalid_organization(api, token):
    response = await api.post("/applications", token, form={"name": "App", "organization_id": "987654"})

    await assert_error(response, 404, "Invalid organization")


@pytest.mark.parametrize("value", ["abc", "1.5", "1e3"])
async def test_create_with_a_non_integer_organization_id_is_rejected(api, token, value):
    response = await api.post("/applications", token, form={"name": "App", "organization_id": value})

    await assert_error(response, 400, "The organization id field must be an integer.")


async def test_create_in_an_organization_of_the_user_sets_organization_id(api, owner, token):
    organization = await make_organization(owner)

    created = await create(api, token, form={"name": "Team app", "organization_id": str(organization.id)})

    assert created["organization_id"] == organization.id


async def test_application_without_organization_has_null_organization_id(api, token):
    created = await create(api, token, form={"name": "Solo"})

    assert created["organization_id"] is None


async def test_organization_member_sees_an_application_of_the_organization(api, owner):
    member = await make_user()
    organization = await make_organization(owner, member)
    application = await make_application(owner, organization_id=organization.id)

    response = await api.get(f"/applications/{application.id}", await make_token(member, "read"))

    assert (await data_of(response))["id"] == application.id


async def test_organization_member_can_update_an_application_of_the_organization(api, owner):
    member = await make_user()
    organization = await make_organization(owner, member)
    application = await make_application(owner, organization_id=organization.id)

    response = await api.put(
        f"/applications/{application.id}", await make_token(member, "write"), form={"name": "Renamed"}
    )

    assert (await data_of(response))["name"] == "Renamed"
    assert (await Application.get(id=application.id)).name == "Renamed"


# Roles: only owners decide which applications belong to an organization

OWNERS_ONLY = "Only an owner of the organization can do this."


async def test_an_agent_cannot_create_an_application_in_the_organization(api, owner):
    agent = await make_user()
    organization = await make_organization(owner, agent)

    response = await api.post(
        "/applications",
        await make_token(agent, "write"),
        form={"name": "Sneaked in", "organization_id": str(organization.id)},
    )

    await assert_error(response, 403, OWNERS_ONLY)
    assert await Application.all().count() == 0


async def test_an_agent_cannot_move_their_application_into_the_organization(api, owner, update_method):
    agent = await make_user()
    organization = await make_organization(owner, agent)
    application = await make_application(agent)

    response = await update(
        api,
        await make_token(agent, "write"),
        update_method,
        application.id,
        form={"organization_id": str(organization.id)},
    )

    await assert_error(response, 403, OWNERS_ONLY)
    assert (await Application.get(id=application.id)).organization_id is None


async def test_an_agent_cannot_move_an_application_out_of_the_organization(api, owner, update_method):
    agent = await make_user()
    organization = await make_organization(owner, agent)
    own = await make_organization(agent, name="Agent's own")
    application = await make_application(owner, organization_id=organization.id)
    agent_token = await make_token(agent, "write")

    for target in ("", str(own.id)):
        response = await update(
            api, agent_token, update_method, application.id, form={"organization_id": target, "name": "Mine"}
        )

        await assert_error(response, 403, OWNERS_ONLY)
        stored = await Application.get(id=application.id)
        assert (stored.organization_id, stored.name) == (organization.id, application.name)


async def test_an_agent_may_send_the_current_organization_with_other_changes(api, owner, update_method):
    agent = await make_user()
    organization = await make_organization(owner, agent)
    application = await make_application(owner, organization_id=organization.id)

    response = await update(
        api,
        await make_token(agent, "write"),
        update_method,
        application.id,
        json={"organization_id": organization.id, "name": "Renamed", "uploads_enabled": False},
    )

    updated = await data_of(response)
    assert (updated["organization_id"], updated["name"], updated["uploads_enabled"]) == (
        organization.id,
        "Renamed",
        False,
    )


async def test_an_owner_of_both_organizations_moves_an_application_between_them(api, owner, token):
    first = await make_organization(owner, name="First")
    second = await make_organization(owner, name="Second")
    application = await make_application(owner, organization_id=first.id)

    response = await api.put(
        f"/applications/{application.id}", token, form={"organization_id": str(second.id)}
    )

    assert (await data_of(response))["organization_id"] == second.id


async def test_owning_the_destination_is_not_enough_to_take_an_application_out(api, owner, token):
    colleague = await make_user()
    theirs = await make_organization(colleague, owner, name="Theirs")
    mine = await make_organization(owner, name="Mine")
    application = await make_application(colleague, organization_id=theirs.id)

    response = await api.put(f"/applications/{application.id}", token, form={"organization_id": str(mine.id)})

    await assert_error(response, 403, OWNERS_ONLY)
    assert (await Application.get(id=application.id)).organization_id == theirs.id


async def test_the_creator_who_left_cannot_take_the_application_out(api, owner, token):
    colleague = await make_user()
    organization = await make_organization(owner, colleague)
    application = await make_application(owner, organization_id=organization.id)
    await change_role(owner, organization, colleague.id, "owner")
    await remove_member(owner, organization, owner.id)

    response = await api.put(f"/applications/{application.id}", token, form={"organization_id": ""})

    await assert_error(response, 403, OWNERS_ONLY)
    assert (await Application.get(id=application.id)).organization_id == organization.id


async def test_another_user_cannot_move_an_application_into_an_organization_they_do_not_see(api, owner):
    stranger = await make_user()
    organization = await make_organization(owner)
    theirs = await make_application(stranger)

    response = await api.put(
        f"/applications/{theirs.id}",
        await make_token(stranger, "write"),
        form={"organization_id": str(organization.id)},
    )

    await assert_error(response, 404, "Invalid organization")
    assert (await Application.get(id=theirs.id)).organization_id is None


async def test_keys_hold_platform_keys_and_the_intake_address(api, token):
    created = await create(api, token, form={"name": "Keys"})

    keys = created["keys"]
    assert set(keys) == {"javascript", "ios", "android", "api", "email"}
    platform_keys = [keys[p] for p in ("javascript", "ios", "android", "api")]
    assert all(isinstance(key, str) and len(key) >= 16 for key in platform_keys)
    assert len(set(platform_keys)) == 4
    assert re.fullmatch(rf"feedback-{created['id']}-[A-Za-z0-9]+@in\.earful\.test", keys["email"])


async def test_keys_differ_between_applications(api, token):
    first = await create(api, token, form={"name": "One"})
    second = await create(api, token, form={"name": "Two"})

    assert first["keys"]["api"] != second["keys"]["api"]
    assert first["keys"]["email"] != second["keys"]["email"]


async def test_new_application_has_the_defaults(api, token):
    created = await create(api, token, form={"name": "Defaults"})

    assert created["uploads_enabled"] is True
    assert created["target_average_first_reply_time"] == 86400
    assert created["average_first_reply_time"] == 0
    assert created["url"] is None
    assert created["logo"] is None


@pytest.mark.parametrize(("value", "expected"), [("false", False), ("0", False), ("true", True), ("1", True)])
async def test_create_accepts_uploads_enabled(api, token, value, expected):
    created = await create(api, token, form={"name": "App", "uploads_enabled": value})

    assert created["uploads_enabled"] is expected


@pytest.mark.parametrize("value", ["yes", "2", ""])
async def test_create_with_invalid_uploads_enabled_is_rejected(api, token, value):
    response = await api.post("/applications", token, form={"name": "App", "uploads_enabled": value})

    await assert_error(response, 400, "The uploads enabled field must be true or false.")


async def test_create_accepts_target_average_first_reply_time(api, token):
    created = await create(api, token, form={"name": "App", "target_average_first_reply_time": "3600"})

    assert created["target_average_first_reply_time"] == 3600


@pytest.mark.parametrize("value", ["soon", "1.5", ""])
async def test_create_with_non_integer_target_average_first_reply_time_is_rejected(api, token, value):
    response = await api.post(
        "/applications", token, form={"name": "App", "target_average_first_reply_time": value}
    )

    await assert_error(response, 400, "The target average first reply time field must be an integer.")


@pytest.mark.parametrize("value", ["-1", "31536001"])
async def test_create_with_out_of_range_target_average_first_reply_time_is_rejected(api, token, value):
    response = await api.post(
        "/applications", token, form={"name": "App", "target_average_first_reply_time": value}
    )

    await assert_error(
        response, 400, "The target average first reply time field must be between 0 and 31536000."
    )


async def test_application_fields_have_the_specified_types(api, owner, token):
    organization = await make_organization(owner)
    created = await create(
        api,
        token,
        form={"name": "Typed", "url": "https://a.example", "organization_id": str(organization.id)},
    )

    shown = await data_of(await api.get(f"/applications/{created['id']}", token))

    integers = ("id", "organization_id", "average_first_reply_time", "target_average_first_reply_time")
    assert all(type(shown[name]) is int for name in (*integers, "created_at", "updated_at"))
    assert type(shown["name"]) is str
    assert type(shown["url"]) is str
    assert type(shown["uploads_enabled"]) is bool
    assert type(shown["receipts_enabled"]) is bool
    assert shown["logo"] is None
    assert all(type(value) is str for value in shown["keys"].values())
    assert set(shown) == {
        *integers,
        "name",
        "url",
        "logo",
        "uploads_enabled",
        "capture_enabled",
        "submits_per_minute",
        "opens_per_minute",
        "uploads_per_minute",
        "submits_per_minute_total",
        "allowed_origins",
        "retention_days",
        "retention_archived_only",
        "receipts_enabled",
        "keys",
        "created_at",
        "updated_at",
    }


async def test_created_at_and_updated_at_are_current_timestamps(api, token):
    before = int(datetime.now(UTC).timestamp())

    created = await create(api, token, form={"name": "Now"})

    after = int(datetime.now(UTC).timestamp())
    assert before <= created["created_at"] <= after
    assert before <= created["updated_at"] <= after


# Showing


@pytest.mark.parametrize("application_id", ["987654", "0", "abc", "99999999999999999999", "-1"])
async def test_show_unknown_application_is_invalid_application(api, token, application_id):
    response = await api.get(f"/applications/{application_id}", token)

    await assert_error(response, 404, "Invalid application")


async def test_show_application_of_another_user_is_invalid_application(api, token):
    foreign = await make_application(await make_user())

    response = await api.get(f"/applications/{foreign.id}", token)

    await assert_error(response, 404, "Invalid application")


# Updating


@pytest.fixture(params=["post", "put"])
def update_method(request: pytest.FixtureRequest) -> str:
    """POST and PUT /applications/{id} are the same operation."""
    return request.param


async def update(api, token: str, method: str, application_id: int, **kwargs):
    return await getattr(api, method)(f"/applications/{application_id}", token, **kwargs)


async def test_update_changes_the_sent_fields(api, owner, token, update_method):
    organization = await make_organization(owner)
    created = await create(api, token, form={"name": "Before"})

    response = await update(
        api,
        token,
        update_method,
        created["id"],
        form={
            "name": "After",
            "url": "https://after.example",
            "uploads_enabled": "false",
            "target_average_first_reply_time": "600",
            "organization_id": str(organization.id),
        },
    )

    updated = await data_of(response)
    assert updated["name"] == "After"
    assert updated["url"] == "https://after.example"
    assert updated["uploads_enabled"] is False
    assert updated["target_average_first_reply_time"] == 600
    assert updated["organization_id"] == organization.id
    assert await data_of(await api.get(f"/applications/{created['id']}", token)) == updated


async def test_update_keeps_the_fields_that_are_not_sent(api, owner, token, update_method):
    organization = await make_organization(owner)
    created = await create(
        api,
        token,
        form={
            "name": "Before",
            "url": "https://before.example",
            "uploads_enabled": "0",
            "target_average_first_reply_time": "3600",
            "organization_id": str(organization.id),
        },
        files=upload(tiny_png(), "logo.png"),
    )

    response = await update(api, token, update_method, created["id"], form={"name": "After"})

    updated = await data_of(response)
    assert updated == {**created, "name": "After", "updated_at": updated["updated_at"]}


async def test_update_with_no_fields_is_refused_and_changes_nothing(api, token, update_method):
    created = await create(api, token, form={"name": "Same", "url": "https://same.example"})

    response = await update(api, token, update_method, created["id"], form={})

    assert response.status_code == 400
    assert await body_text(response) == "Nothing sent to update"
    assert await data_of(await api.get(f"/applications/{created['id']}", token)) == created


@ON_DISK_AND_IN_A_BUCKET
async def test_update_with_a_logo_replaces_it(api, token, update_method):
    created = await create(api, token, form={"name": "Logo"}, files=upload(tiny_png(), "old.png"))

    response = await update(
        api, token, update_method, created["id"], form={}, files=upload(tiny_png(), "new.png")
    )

    updated = await data_of(response)
    assert updated["logo"] != created["logo"]
    new_logo = await api.client.get(updated["logo"].removeprefix(BASE_URL))
    assert (new_logo.status_code, new_logo.mimetype) == (200, "image/png")
    old_logo = await api.client.get(created["logo"].removeprefix(BASE_URL))
    assert old_logo.status_code == 404


async def test_update_sets_updated_at_and_keeps_created_at(api, token, update_method):
    created = await create(api, token, form={"name": "Old"})
    past = datetime(2020, 1, 2, 3, 4, 5, tzinfo=UTC)
    await atomic(lambda: Application.filter(id=created["id"]).update(created_at=past, updated_at=past))

    response = await update(api, token, update_method, created["id"], form={"name": "New"})

    updated = await data_of(response)
    assert updated["created_at"] == int(past.timestamp())
    assert updated["updated_at"] > int(past.timestamp())


async def test_update_with_empty_name_is_rejected(api, token, update_method):
    created = await create(api, token, form={"name": "Keep"})

    response = await update(api, token, update_method, created["id"], form={"name": " "})

    await assert_error(response, 400, "The name field is required.")
    assert (await Application.get(id=created["id"])).name == "Keep"


async def test_update_with_an_invalid_url_is_rejected(api, token, update_method):
    created = await create(api, token, form={"name": "Keep"})

    response = await update(api, token, update_method, created["id"], form={"url": "nope"})

    await assert_error(response, 400, "The url field must be a valid URL.")


async def test_update_with_empty_organization_id_removes_the_organization(api, owner, token, update_method):
    organization = await make_organization(owner)
    created = await create(api, token, form={"name": "Team", "organization_id": str(organization.id)})

    response = await update(api, token, update_method, created["id"], form={"organization_id": ""})

    assert (await data_of(response))["organization_id"] is None


async def test_update_into_a_foreign_organization_is_invalid_organization(api, token, update_method):
    created = await create(api, token, form={"name": "Mine"})
    foreign = await make_organization(await make_user())

    response = await update(
        api, token, update_method, created["id"], form={"organization_id": str(foreign.id)}
    )

    await assert_error(response, 404, "Invalid organization")
    assert (await Application.get(id=created["id"])).organization_id is None


async def test_update_of_an_application_of_another_user_is_invalid_application(api, token, update_method):
    foreign = await make_application(await make_user(), name="Theirs")

    response = await update(api, token, update_method, foreign.id, form={"name": "Mine now"})

    await assert_error(response, 404, "Invalid application")
    assert (await Application.get(id=foreign.id)).name == "Theirs"


async def test_update_of_an_unknown_application_is_invalid_application(api, token, update_method):
    response = await update(api, token, update_method, 987654, form={"name": "Ghost"})

    await assert_error(response, 404, "Invalid application")
