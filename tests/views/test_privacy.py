"""The Privacy requests page: export a person's data as a file, erase it after typing the address
twice, and the recent audit entries."""

from __future__ import annotations

import json

from app.models import AuditEntry, Feedback, Member
from tests.factories import make_application, make_thread, make_user, sign_in

PERSON = "pat@example.org"


async def test_the_account_page_links_to_the_privacy_page(client, agent):
    await sign_in(client, agent)

    body = await (await client.get("/app/account")).get_data(as_text=True)

    assert 'href="/app/privacy"' in body


async def test_the_page_offers_the_administered_applications(client, agent):
    await make_application(agent, name="Shop")
    await make_application(await make_user(), name="Elsewhere")
    await sign_in(client, agent)

    response = await client.get("/app/privacy")

    body = await response.get_data(as_text=True)
    assert response.status_code == 200
    assert "Privacy requests" in body and "Shop" in body
    assert "Elsewhere" not in body


async def test_the_page_needs_a_signed_in_agent(client, db):
    response = await client.get("/app/privacy")

    assert response.status_code in (302, 303)


async def test_export_downloads_the_json_document(client, agent):
    application = await make_application(agent)
    await make_thread(application, email=PERSON, message="My words")
    csrf = await sign_in(client, agent)

    response = await client.post("/app/privacy/export", form={"csrf_token": csrf, "email": PERSON})

    assert response.status_code == 200
    assert response.mimetype == "application/json"
    assert response.headers["Content-Disposition"].startswith('attachment; filename="earful-person-')
    assert PERSON not in response.headers["Content-Disposition"]
    document = json.loads(await response.get_data(as_text=True))
    assert document["applications"][0]["threads"][0]["message"] == "My words"


async def test_export_with_a_bad_address_shows_the_error(client, agent):
    csrf = await sign_in(client, agent)

    response = await client.post("/app/privacy/export", form={"csrf_token": csrf, "email": "nope"})

    assert response.status_code == 400
    assert "The email field must be a valid email address." in await response.get_data(as_text=True)


async def test_erase_needs_the_address_typed_twice(client, agent):
    application = await make_application(agent)
    await make_thread(application, email=PERSON)
    csrf = await sign_in(client, agent)

    response = await client.post(
        "/app/privacy/erase",
        form={"csrf_token": csrf, "email": PERSON, "confirm_email": "pet@example.org"},
    )

    assert response.status_code == 422
    assert "Type the same e-mail address twice to confirm." in await response.get_data(as_text=True)
    assert await Member.filter(application_id=application.id, email=PERSON).exists()


async def test_erase_shows_the_counts_and_the_audit_entry(client, agent):
    application = await make_application(agent, name="Shop")
    await make_thread(application, email=PERSON)
    await make_thread(application, email=PERSON)
    csrf = await sign_in(client, agent)

    response = await client.post(
        "/app/privacy/erase",
        form={"csrf_token": csrf, "email": PERSON, "confirm_email": "Pat@Example.org"},
    )

    body = await response.get_data(as_text=True)
    assert response.status_code == 200
    assert "<dt>Threads</dt><dd>2</dd>" in body
    assert "Person erased" in body
    assert await Feedback.filter(application_id=application.id).count() == 0


async def test_erase_without_the_csrf_token_is_refused(client, agent):
    application = await make_application(agent)
    await make_thread(application, email=PERSON)
    await sign_in(client, agent)

    response = await client.post("/app/privacy/erase", form={"email": PERSON, "confirm_email": PERSON})

    assert response.status_code == 400
    assert await Member.filter(application_id=application.id, email=PERSON).exists()


async def test_a_second_user_erases_nothing_of_the_first(client, agent):
    application = await make_application(agent)
    await make_thread(application, email=PERSON)
    stranger = await make_user()
    csrf = await sign_in(client, stranger)

    response = await client.post(
        "/app/privacy/erase", form={"csrf_token": csrf, "email": PERSON, "confirm_email": PERSON}
    )

    assert "<dt>Threads</dt><dd>0</dd>" in await response.get_data(as_text=True)
    assert await Member.filter(application_id=application.id, email=PERSON).exists()


async def test_a_second_user_naming_the_first_users_application_gets_not_found(client, agent):
    application = await make_application(agent)
    await make_thread(application, email=PERSON)
    csrf = await sign_in(client, await make_user())

    response = await client.post(
        "/app/privacy/erase",
        form={
            "csrf_token": csrf,
            "email": PERSON,
            "confirm_email": PERSON,
            "application_id": str(application.id),
        },
    )

    assert response.status_code == 404
    assert "Invalid application" in await response.get_data(as_text=True)
    assert await Member.filter(application_id=application.id, email=PERSON).exists()


async def test_a_second_user_sees_none_of_the_first_users_audit_entries(client, agent):
    application = await make_application(agent, name="Secret shop")
    await make_thread(application, email=PERSON)
    csrf = await sign_in(client, agent)
    await client.post(
        "/app/privacy/erase", form={"csrf_token": csrf, "email": PERSON, "confirm_email": PERSON}
    )
    assert await AuditEntry.all().count() == 1
    await client.post("/app/logout", form={"csrf_token": csrf})
    await sign_in(client, await make_user())

    body = await (await client.get("/app/privacy")).get_data(as_text=True)

    assert "No entries yet." in body
    assert "Secret shop" not in body


async def test_application_names_are_escaped(client, agent):
    await make_application(agent, name="<b>Shop</b>")
    await sign_in(client, agent)

    body = await (await client.get("/app/privacy")).get_data(as_text=True)

    assert "<b>Shop</b>" not in body
    assert "&lt;b&gt;Shop&lt;/b&gt;" in body
