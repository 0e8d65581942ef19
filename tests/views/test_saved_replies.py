"""Saved replies in the web app: the page of an application and of an organization, a saved
reply's page, deletion asked first, and the reply box of a thread (select and Insert without
JavaScript; the typeahead's filled text)."""

from __future__ import annotations

import html
import re

import pytest

from app.models import SavedReply
from app.services.organizations import add_member, remove_member
from tests.factories import (
    body_text,
    make_application,
    make_organization,
    make_saved_reply,
    make_thread,
    make_user,
    sign_in,
)
from tests.views.test_applications import intruder, signed_in

__all__ = ["intruder", "signed_in"]  # fixtures used by the tests below

HTMX = {"HX-Request": "true"}


def page_of(application=None, organization=None, suffix: str = "") -> str:
    if application is not None:
        return f"/app/applications/{application.id}/saved-replies{suffix}"
    return f"/app/organizations/{organization.id}/saved-replies{suffix}"


def thread_url(thread, suffix: str = "") -> str:
    return f"/app/applications/{thread.application_id}/feedback/{thread.id}{suffix}"


async def html_of(client, path: str) -> str:
    response = await client.get(path)
    assert response.status_code == 200, path
    assert response.mimetype == "text/html"
    return await body_text(response)


@pytest.fixture
async def organization(agent):
    return await make_organization(agent, name="Acme")


# --- the page ----------------------------------------------------------------------------------


async def test_the_application_page_lists_its_and_its_organizations_replies(
    client, agent, organization, signed_in
):
    application = await make_application(agent, organization_id=organization.id)
    await make_saved_reply(agent, application, title="Refund policy", text="Hi {name}, refunds take 5 days.")
    await make_saved_reply(agent, organization=organization, title="Welcome")

    body = await html_of(client, page_of(application))

    assert "Refund policy" in body and "Hi {name}, refunds take 5 days." in body
    assert "From the organization" in body and "Welcome" in body
    assert 'aria-current="page">Saved replies</a>' in body
    assert 'id="saved-reply-title"' in body  # the form that adds one


async def test_the_creator_of_an_organizations_application_sees_its_replies_without_being_a_member(
    client, agent, signed_in
):
    owner = await make_user()
    organization = await make_organization(owners=(agent, owner))
    application = await make_application(agent, organization_id=organization.id)
    await make_saved_reply(owner, organization=organization, title="Shared answer")
    await remove_member(agent, organization, agent.id)

    body = await html_of(client, page_of(application))

    assert "Shared answer" in body


async def test_adding_one_goes_back_to_the_list(client, application, signed_in):
    response = await client.post(
        page_of(application), form={"csrf_token": signed_in, "title": "Thanks", "text": "Thanks, {name}!"}
    )

    assert response.status_code == 303
    assert response.headers["Location"] == page_of(application)
    body = await html_of(client, page_of(application))
    assert "Saved reply added." in body and "Thanks, {name}!" in body


async def test_a_refused_one_shows_the_form_again_and_saves_nothing(client, application, signed_in):
    response = await client.post(
        page_of(application), form={"csrf_token": signed_in, "title": "", "text": "Kept as typed"}
    )

    assert response.status_code == 400
    body = await body_text(response)
    assert "The title field is required." in body and "Kept as typed" in body
    assert await SavedReply.all().count() == 0


async def test_adding_needs_the_csrf_token(client, application, signed_in):
    response = await client.post(page_of(application), form={"title": "t", "text": "x"})

    assert response.status_code == 400
    assert await SavedReply.all().count() == 0


async def test_changing_one_on_its_page(client, agent, application, signed_in):
    saved = await make_saved_reply(agent, application, title="Old", text="Old text")

    shown = await html_of(client, page_of(application, suffix=f"/{saved.id}"))
    response = await client.post(
        page_of(application, suffix=f"/{saved.id}"),
        form={"csrf_token": signed_in, "title": "New", "text": "New text {email}"},
    )

    assert "Old text" in shown
    assert response.status_code == 303
    assert await SavedReply.filter(id=saved.id).values_list("title", "text") == [("New", "New text {email}")]


async def test_deleting_asks_first_without_javascript(client, agent, application, signed_in):
    saved = await make_saved_reply(agent, application, title="Doomed")
    delete = page_of(application, suffix=f"/{saved.id}/delete")

    asked = await client.post(delete, form={"csrf_token": signed_in})
    assert asked.status_code == 200
    assert "Delete this saved reply?" in await body_text(asked)
    assert await SavedReply.filter(id=saved.id).exists()

    done = await client.post(delete, form={"csrf_token": signed_in, "confirmed": "1"})
    assert done.status_code == 303
    assert not await SavedReply.filter(id=saved.id).exists()


async def test_deleting_with_htmx_sends_the_browser_back_to_the_list(client, agent, application, signed_in):
    saved = await make_saved_reply(agent, application)

    response = await client.post(
        page_of(application, suffix=f"/{saved.id}/delete"),
        form={"csrf_token": signed_in, "confirmed": "1"},
        headers=HTMX,
    )

    assert response.headers["HX-Redirect"] == page_of(application)
    assert not await SavedReply.filter(id=saved.id).exists()


async def test_an_owner_manages_the_organizations_replies_on_its_page(client, organization, signed_in):
    org_page = await html_of(client, f"/app/organizations/{organization.id}")
    response = await client.post(
        page_of(organization=organization), form={"csrf_token": signed_in, "title": "Hours", "text": "9 to 5"}
    )

    assert page_of(organization=organization) in org_page
    assert response.status_code == 303
    assert await SavedReply.filter(organization_id=organization.id).values_list("title", flat=True) == [
        "Hours"
    ]


async def test_an_agent_of_the_organization_reads_its_replies_but_may_not_change_them(
    app, agent, organization
):
    saved = await make_saved_reply(agent, organization=organization, title="Hours")
    member = await make_user()
    await add_member(organization, member)
    client = app.test_client()
    csrf = await sign_in(client, member)

    body = await html_of(client, page_of(organization=organization))
    refused = [
        await client.post(
            page_of(organization=organization), form={"csrf_token": csrf, "title": "t", "text": "x"}
        ),
        await client.post(
            page_of(organization=organization, suffix=f"/{saved.id}"),
            form={"csrf_token": csrf, "title": "t", "text": "x"},
        ),
        await client.post(
            page_of(organization=organization, suffix=f"/{saved.id}/delete"),
            form={"csrf_token": csrf, "confirmed": "1"},
        ),
    ]

    assert "Hours" in body
    assert 'id="saved-reply-title"' not in body and "saved-item__delete" not in body
    assert [response.status_code for response in refused] == [403, 403, 403]
    assert await SavedReply.filter(organization_id=organization.id).values_list("title", flat=True) == [
        "Hours"
    ]


async def test_another_user_gets_the_not_found_page_for_everything(app, agent, organization, intruder):
    other, csrf = intruder
    application = await make_application(agent, organization_id=organization.id)
    saved = await make_saved_reply(agent, application)
    org_saved = await make_saved_reply(agent, organization=organization)
    thread = await make_thread(application)
    attempts = [
        ("get", page_of(application), None),
        ("post", page_of(application), {"title": "t", "text": "x"}),
        ("get", page_of(application, suffix=f"/{saved.id}"), None),
        ("post", page_of(application, suffix=f"/{saved.id}"), {"title": "t", "text": "x"}),
        ("post", page_of(application, suffix=f"/{saved.id}/delete"), {"confirmed": "1"}),
        ("get", page_of(organization=organization), None),
        ("post", page_of(organization=organization), {"title": "t", "text": "x"}),
        ("get", page_of(organization=organization, suffix=f"/{org_saved.id}"), None),
        ("post", page_of(organization=organization, suffix=f"/{org_saved.id}/delete"), {"confirmed": "1"}),
        ("get", thread_url(thread, f"/saved-replies/{saved.id}"), None),
        ("post", thread_url(thread, "/saved-replies/insert"), {"saved_reply": str(saved.id), "message": ""}),
    ]

    for method, path, form in attempts:
        kwargs = {} if form is None else {"form": {"csrf_token": csrf, **form}}
        response = await getattr(other, method)(path, **kwargs)
        assert response.status_code == 404, (method, path)
    assert await SavedReply.all().order_by("id").values_list("title", "text") == [
        (saved.title, saved.text),
        (org_saved.title, org_saved.text),
    ]


async def test_a_saved_reply_of_another_place_looks_like_one_that_does_not_exist(
    client, agent, organization, signed_in
):
    application = await make_application(agent)
    of_organization = await make_saved_reply(agent, organization=organization)

    response = await client.get(page_of(application, suffix=f"/{of_organization.id}"))

    assert response.status_code == 404


async def test_what_people_typed_is_escaped(client, agent, application, signed_in):
    await make_saved_reply(agent, application, title="<b>Bold</b>", text="<script>alert(1)</script>")

    body = await html_of(client, page_of(application))

    assert "<script>alert(1)</script>" not in body and "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert "&lt;b&gt;Bold&lt;/b&gt;" in body


# --- the reply box -----------------------------------------------------------------------------


async def test_the_reply_box_offers_the_applications_and_its_organizations_replies(
    client, agent, organization, signed_in
):
    application = await make_application(agent, organization_id=organization.id)
    own = await make_saved_reply(agent, application, title="Refund")
    shared = await make_saved_reply(agent, organization=organization, title="Apology")
    thread = await make_thread(application)

    body = await html_of(client, thread_url(thread))

    options = re.findall(r'<option value="(\d+)" data-fill="([^"]+)">([^<]+)</option>', body)
    assert [(int(value), title) for value, _, title in options] == [
        (shared.id, "Apology"),
        (own.id, "Refund"),
    ]
    assert html.unescape(options[0][1]) == thread_url(thread, f"/saved-replies/{shared.id}")
    assert 'formaction="' + thread_url(thread, "/saved-replies/insert") + '"' in body
    assert "data-saved-replies" in body


async def test_a_thread_without_saved_replies_shows_no_picker(client, application, signed_in):
    thread = await make_thread(application)

    body = await html_of(client, thread_url(thread))

    assert "data-saved-insert" not in body and "data-saved-replies" not in body


async def test_the_typeahead_gets_the_text_filled_for_the_thread_as_plain_text(
    client, agent, application, signed_in
):
    thread = await make_thread(application, email="rita@example.org", name="<img src=x onerror=alert(1)>")
    saved = await make_saved_reply(agent, application, text="Hi {name} ({email}) {unknown}")

    response = await client.get(thread_url(thread, f"/saved-replies/{saved.id}"))

    assert response.status_code == 200
    assert response.mimetype == "text/plain"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert await body_text(response) == "Hi <img src=x onerror=alert(1)> (rita@example.org) {unknown}"


async def test_insert_without_javascript_puts_the_filled_text_after_the_draft(
    client, agent, application, signed_in
):
    thread = await make_thread(application, email="rita@example.org", name="Rita <b>")
    saved = await make_saved_reply(agent, application, text="Hi {name}, thanks for using {application}.")

    response = await client.post(
        thread_url(thread, "/saved-replies/insert"),
        form={
            "csrf_token": signed_in,
            "message": "My draft  \n",
            "type": "note",
            "saved_reply": str(saved.id),
        },
    )

    assert response.status_code == 200
    body = await body_text(response)
    textarea = re.search(r'<textarea name="message"[^>]*>(.*?)</textarea>', body, re.S)
    assert textarea is not None
    assert (
        textarea.group(1)
        == f"My draft\n\nHi Rita &lt;b&gt;, thanks for using {html.escape(application.name)}."
    )


async def test_insert_without_a_choice_says_so_and_keeps_the_draft(client, application, signed_in):
    thread = await make_thread(application)

    response = await client.post(
        thread_url(thread, "/saved-replies/insert"),
        form={"csrf_token": signed_in, "message": "Keep me", "saved_reply": ""},
    )

    assert response.status_code == 400
    body = await body_text(response)
    assert "Choose a saved reply to insert." in body and "Keep me</textarea>" in body


async def test_insert_refuses_a_saved_reply_the_application_does_not_offer(
    client, agent, application, signed_in
):
    thread = await make_thread(application)
    elsewhere = await make_saved_reply(agent, await make_application(agent))

    response = await client.post(
        thread_url(thread, "/saved-replies/insert"),
        form={"csrf_token": signed_in, "message": "", "saved_reply": str(elsewhere.id)},
    )

    assert response.status_code == 404
