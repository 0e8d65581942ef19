"""POST /inbound/email: raw mail from an MTA, behind the deployment's secret."""

from __future__ import annotations

from app.models import Feedback
from tests.conftest import INTAKE_DOMAIN
from tests.factories import body_text
from tests.mail_fixtures import INBOUND_SECRET, make_mail

AUTH = {"Authorization": f"Bearer {INBOUND_SECRET}", "Content-Type": "message/rfc822"}


async def post(client, raw: bytes, headers: dict[str, str]):
    return await client.post("/inbound/email", data=raw, headers=headers)


async def test_posted_mail_becomes_a_thread(inbound_client, intake, application):
    raw = make_mail(intake, "The invoice PDF is empty.").as_bytes()

    response = await post(inbound_client, raw, {**AUTH, "X-Earful-Recipient": intake})

    assert response.status_code == 202
    assert response.mimetype == "text/plain"
    thread = await Feedback.get(application_id=application.id).prefetch_related("member")
    assert thread.message == "Checkout is broken\n\nThe invoice PDF is empty."
    assert thread.member.email == "jo@example.org"


async def test_without_an_envelope_recipient_the_headers_name_it(inbound_client, intake, application):
    raw = make_mail(f"Support <{intake}>", "No recipient header given.").as_bytes()

    response = await post(inbound_client, raw, AUTH)

    assert response.status_code == 202
    assert await Feedback.filter(application_id=application.id).count() == 1


async def test_a_wrong_or_missing_secret_is_forbidden(inbound_client, intake, application):
    raw = make_mail(intake).as_bytes()
    for headers in ({"Authorization": "Bearer wrong"}, {}, {"Authorization": INBOUND_SECRET}):
        response = await post(inbound_client, raw, headers)
        assert response.status_code == 403
        assert response.mimetype == "text/plain"
    assert await Feedback.all().count() == 0


async def test_the_endpoint_does_not_exist_without_a_secret(client, intake, application):
    response = await post(client, make_mail(intake).as_bytes(), AUTH)

    assert response.status_code == 404
    assert await Feedback.all().count() == 0


async def test_an_unknown_recipient_is_404(inbound_client, application):
    address = f"feedback-{application.id}-nottheright@{INTAKE_DOMAIN}"
    response = await post(
        inbound_client, make_mail(address).as_bytes(), {**AUTH, "X-Earful-Recipient": address}
    )

    assert response.status_code == 404
    assert await body_text(response) == "No such recipient here"


async def test_bad_mail_is_400(inbound_client, intake, application):
    for raw in (b"", b"\x00\x01 not a message", make_mail(intake, "", subject="").as_bytes()):
        response = await post(inbound_client, raw, {**AUTH, "X-Earful-Recipient": intake})
        assert response.status_code == 400, raw
        assert response.mimetype == "text/plain"
    assert await Feedback.all().count() == 0
