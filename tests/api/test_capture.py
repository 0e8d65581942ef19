"""The capture API: POST /applications/{id}/open, /upload and /submit (seed §4.2, §5, §7; contract §2)."""

from __future__ import annotations

import dataclasses
import json
from io import BytesIO

import pytest
from werkzeug.datastructures import FileStorage

from app import create_app
from app.models import Attachment, Feedback, FormOpen, Member
from app.proxies import parse_networks
from tests.conftest import BASE_URL
from tests.factories import Api, body_json, body_text, make_application

UNKNOWN_ID = 999_999
USER_AGENT = "AcmeWidget/2.3 (iPhone; iOS 17.4)"
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32
VALID = {"email": "ann@example.org", "message": "The export button does nothing."}

SPANISH = {
    "Feedback sent!": "¡Comentario enviado!",
    "Your email address is required": "Tu dirección de correo electrónico es obligatoria",
    "Not authorized": "No autorizado",
    "Application not found": "Aplicación no encontrada",
    "Invalid NPS rating": "Puntuación NPS no válida",
    "Uploads not enabled": "La subida de archivos no está habilitada",
}
PORTUGUESE = {
    "Feedback sent!": "Feedback enviado!",
    "Your email address is required": "Seu endereço de e-mail é obrigatório",
    "Not authorized": "Não autorizado",
    "Application not found": "Aplicação não encontrada",
    "Invalid NPS rating": "Nota NPS inválida",
    "Uploads not enabled": "O envio de arquivos não está habilitado",
}
TRANSLATIONS = {"es": SPANISH, "pt": PORTUGUESE}


# --- helpers --------------------------------------------------------------------------------


def capture_path(application_id: object, action: str, key: str | None = None, **query: str) -> str:
    params = dict(query)
    if key is not None:
        params["key"] = key
    suffix = "&".join(f"{name}={value}" for name, value in params.items())
    return f"/applications/{application_id}/{action}" + (f"?{suffix}" if suffix else "")


def as_files(*files: tuple[str, bytes]) -> dict[str, FileStorage]:
    """A multipart ``files`` argument with one field per file."""
    return {
        f"file{index}": FileStorage(BytesIO(content), filename=name)
        for index, (name, content) in enumerate(files)
    }


async def submit(api, application, body: object, **kwargs):
    key = kwargs.pop("key", application.key_api)
    headers = {"User-Agent": USER_AGENT, **kwargs.pop("headers", {})}
    return await api.post(capture_path(application.id, "submit", key), json=body, headers=headers, **kwargs)


async def upload(api, application, *files: tuple[str, bytes], key: str | None = None):
    path = capture_path(application.id, "upload", key or application.key_api)
    return await api.post(path, files=as_files(*files))


async def upload_ids(api, application, *files: tuple[str, bytes]) -> list[int]:
    response = await upload(api, application, *files)
    assert response.status_code == 201, await body_text(response)
    return await body_json(response)


async def assert_text(response, status: int, text: str) -> None:
    assert response.status_code == status
    assert response.mimetype == "text/plain"
    assert await body_text(response) == text


async def threads(api, token, application) -> list[dict]:
    response = await api.get(f"/applications/{application.id}/feedback", token)
    assert response.status_code == 200
    return (await body_json(response))["data"]


async def only_thread(api, token, application) -> dict:
    found = await threads(api, token, application)
    assert len(found) == 1, found
    return found[0]


async def nothing_written(application) -> bool:
    return (
        not await Feedback.filter(application_id=application.id).exists()
        and not await Member.filter(application_id=application.id).exists()
    )


# --- open -----------------------------------------------------------------------------------


async def test_open_answers_201_ok(api, application):
    response = await api.post(capture_path(application.id, "open", application.key_javascript))

    await assert_text(response, 201, "OK")


async def test_open_records_a_form_open(api, application):
    await api.post(capture_path(application.id, "open", application.key_javascript))

    assert await FormOpen.filter(application_id=application.id).count() == 1


async def test_open_with_a_wrong_key_is_not_authorized(api, application):
    response = await api.post(capture_path(application.id, "open", "wrong-key"))

    await assert_text(response, 403, "Not authorized")
    assert not await FormOpen.filter(application_id=application.id).exists()


@pytest.mark.parametrize("path_key", [None, ""], ids=["absent", "empty"])
async def test_open_without_a_key_is_not_authorized(api, application, path_key):
    response = await api.post(capture_path(application.id, "open", path_key))

    await assert_text(response, 403, "Not authorized")


@pytest.mark.parametrize("application_id", [UNKNOWN_ID, "abc"])
async def test_open_for_an_unknown_application_is_invalid_application(api, db, application_id):
    response = await api.post(capture_path(application_id, "open", "any-key"))

    await assert_text(response, 404, "Invalid application")


async def test_open_checks_the_application_before_the_key(api, application):
    response = await api.post(capture_path(application.id + 1000, "open", "wrong-key"))

    await assert_text(response, 404, "Invalid application")


@pytest.mark.parametrize("platform", ["javascript", "ios", "android", "api"])
async def test_every_platform_key_is_accepted(api, application, platform):
    key = getattr(application, f"key_{platform}")

    response = await api.post(capture_path(application.id, "open", key))

    await assert_text(response, 201, "OK")


async def test_a_key_of_another_application_is_not_authorized(api, agent, application):
    other = await make_application(agent)

    response = await api.post(capture_path(application.id, "open", other.key_api))

    await assert_text(response, 403, "Not authorized")


# --- upload ---------------------------------------------------------------------------------


async def test_upload_of_several_files_answers_201_with_their_ids(api, application):
    response = await upload(api, application, ("a.txt", b"first"), ("b.png", PNG), ("c.txt", b"x"))

    assert response.status_code == 201
    ids = await body_json(response)
    assert isinstance(ids, list) and len(ids) == 3
    assert all(isinstance(item, int) and not isinstance(item, bool) for item in ids)
    assert len(set(ids)) == 3


async def test_upload_records_each_file_for_the_application(api, application):
    ids = await upload_ids(api, application, ("a.txt", b"first"), ("b.txt", b"second!"))

    stored = await Attachment.filter(id__in=ids).order_by("created_at", "id")
    assert [(a.application_id, a.name, a.size) for a in stored] == [
        (application.id, "a.txt", 5),
        (application.id, "b.txt", 7),
    ]


async def test_upload_when_uploads_are_disabled_is_rejected(api, agent):
    application = await make_application(agent, uploads_enabled=False)

    response = await upload(api, application, ("a.txt", b"first"))

    await assert_text(response, 400, "Uploads not enabled")
    assert not await Attachment.filter(application_id=application.id).exists()


async def test_switching_uploads_off_applies_to_the_next_upload(api, application, token):
    await upload_ids(api, application, ("a.txt", b"first"))

    switched = await api.put(f"/applications/{application.id}", token, form={"uploads_enabled": "0"})
    assert switched.status_code == 200

    await assert_text(await upload(api, application, ("b.txt", b"second")), 400, "Uploads not enabled")


async def test_uploads_disabled_is_checked_before_the_body(api, agent):
    application = await make_application(agent, uploads_enabled=False)

    response = await api.post(capture_path(application.id, "upload", application.key_api))

    await assert_text(response, 400, "Uploads not enabled")


async def test_upload_checks_the_key_before_uploads_enabled(api, agent):
    application = await make_application(agent, uploads_enabled=False)

    response = await api.post(capture_path(application.id, "upload", "wrong-key"))

    await assert_text(response, 403, "Not authorized")


async def test_upload_without_a_body_finds_no_files(api, application):
    response = await api.post(capture_path(application.id, "upload", application.key_api))

    await assert_text(response, 400, "No files found")


async def test_upload_of_a_multipart_form_without_files_finds_no_files(api, application):
    response = await api.post(
        capture_path(application.id, "upload", application.key_api), form={"note": "no file here"}
    )

    await assert_text(response, 400, "No files found")


@pytest.mark.parametrize(
    ("content_type", "payload"),
    [
        ("multipart/form-data; boundary=xyz", b"this is not a multipart body"),
        ("multipart/form-data", b'--xyz\r\nContent-Disposition: form-data; name="f"\r\n\r\nhi\r\n--xyz--'),
        (
            "multipart/form-data; boundary=xyz",
            b'--xyz\r\nContent-Disposition: form-data; name="f"; filename="a.txt"\r\n\r\ntruncated',
        ),
    ],
    ids=["garbage", "no-boundary", "truncated"],
)
async def test_upload_of_a_malformed_multipart_body_finds_no_files(api, application, content_type, payload):
    response = await api.post(
        capture_path(application.id, "upload", application.key_api),
        data=payload,
        headers={"Content-Type": content_type},
    )

    await assert_text(response, 400, "No files found")


async def test_upload_of_a_body_that_is_not_multipart_finds_no_files(api, application):
    response = await api.post(
        capture_path(application.id, "upload", application.key_api), json={"file": "a.txt"}
    )

    await assert_text(response, 400, "No files found")


async def test_upload_with_a_wrong_key_is_not_authorized(api, application):
    response = await upload(api, application, ("a.txt", b"first"), key="wrong-key")

    await assert_text(response, 403, "Not authorized")
    assert not await Attachment.filter(application_id=application.id).exists()


async def test_upload_without_a_key_is_not_authorized(api, application):
    response = await api.post(capture_path(application.id, "upload"), files=as_files(("a.txt", b"first")))

    await assert_text(response, 403, "Not authorized")


async def test_upload_for_an_unknown_application_is_invalid_application(api, db):
    response = await api.post(
        capture_path(UNKNOWN_ID, "upload", "any-key"), files=as_files(("a.txt", b"first"))
    )

    await assert_text(response, 404, "Invalid application")


@pytest.fixture
async def small_limit_api(settings):
    """The capture API of an app whose per-file upload limit is 1 KiB."""
    limited = create_app(dataclasses.replace(settings, max_upload_bytes=1024), manage_db=False)
    async with limited.test_app():
        yield Api(limited.test_client())


async def test_upload_of_a_file_over_the_size_limit_is_too_large(small_limit_api, application):
    response = await upload(small_limit_api, application, ("big.bin", b"x" * 1025))

    await assert_text(response, 413, "File too large")


async def test_upload_of_a_file_at_the_size_limit_is_accepted(small_limit_api, application):
    response = await upload(small_limit_api, application, ("exact.bin", b"x" * 1024))

    assert response.status_code == 201
    assert len(await body_json(response)) == 1


async def test_upload_with_one_file_too_large_stores_none_of_the_files(small_limit_api, application):
    await upload(small_limit_api, application, ("small.txt", b"ok"), ("big.bin", b"x" * 2000))

    assert not await Attachment.filter(application_id=application.id).exists()


async def test_chunked_upload_body_is_refused_with_length_required(api, application):
    response = await api.post(
        capture_path(application.id, "upload", application.key_api),
        data=b"5\r\nhello\r\n0\r\n\r\n",
        headers={"Transfer-Encoding": "chunked", "Content-Type": "application/octet-stream"},
    )

    assert response.status_code == 411


async def test_chunked_submit_body_is_refused_with_length_required(api, application):
    response = await api.post(
        capture_path(application.id, "submit", application.key_api),
        data=json.dumps(VALID).encode(),
        headers={"Transfer-Encoding": "chunked", "Content-Type": "application/json"},
    )

    assert response.status_code == 411
    assert await nothing_written(application)


# --- submit: success ------------------------------------------------------------------------


async def test_submit_answers_201_feedback_sent(api, application):
    response = await submit(api, application, VALID)

    await assert_text(response, 201, "Feedback sent!")


async def test_submit_creates_a_thread_with_the_submitted_fields(api, token, application):
    await submit(
        api,
        application,
        {
            "email": "ann@example.org",
            "name": "Ann Lee",
            "message": "The export button does nothing.",
            "url": "https://acme.example/pricing",
            "ip": "198.51.100.7",
            "nps": 9,
        },
    )

    thread = await only_thread(api, token, application)
    assert thread["application_id"] == application.id
    assert thread["email"] == "ann@example.org"
    assert thread["name"] == "Ann Lee"
    assert thread["member"]["email"] == "ann@example.org"
    assert thread["member"]["name"] == "Ann Lee"
    assert thread["message"] == "The export button does nothing."
    assert thread["url"] == "https://acme.example/pricing"
    assert thread["ip_address"] == "198.51.100.7"
    assert thread["user_agent"] == USER_AGENT
    assert thread["nps"] == 9
    assert thread["archived"] is False
    assert thread["attachments"] == []
    assert thread["replies"] == []
    assert thread["properties"] == []
    assert thread["tags"] == []


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("I love this app, it is great", "positive"),
        ("This is terrible, it crashes all the time", "negative"),
    ],
)
async def test_submit_without_sentiment_computes_it_from_the_message(
    api, token, application, message, expected
):
    await submit(api, application, {**VALID, "message": message})

    assert (await only_thread(api, token, application))["sentiment"] == expected


@pytest.mark.parametrize("sentiment", ["positive", "neutral", "negative"])
async def test_submit_with_a_sentiment_keeps_it(api, token, application, sentiment):
    await submit(
        api, application, {**VALID, "message": "I love this app, it is great", "sentiment": sentiment}
    )

    assert (await only_thread(api, token, application))["sentiment"] == sentiment


async def test_submit_without_ip_stores_the_callers_address(api, token, application):
    await submit(api, application, VALID, scope_base={"client": ("192.0.2.44", 50123)})

    assert (await only_thread(api, token, application))["ip_address"] == "192.0.2.44"


async def test_submit_behind_a_trusted_proxy_stores_the_clients_address(settings, token, application):
    app = create_app(
        dataclasses.replace(settings, trusted_proxies=parse_networks("10.0.0.0/8")), manage_db=False
    )
    async with app.test_app():
        proxied = Api(app.test_client())
        await submit(
            proxied,
            application,
            VALID,
            headers={"X-Forwarded-For": "192.0.2.44, 10.0.0.3"},
            scope_base={"client": ("10.0.0.2", 50123)},
        )

        assert (await only_thread(proxied, token, application))["ip_address"] == "192.0.2.44"


async def test_submit_stores_the_requests_user_agent(api, token, application):
    await submit(api, application, VALID, headers={"User-Agent": "Custom/9.9"})

    assert (await only_thread(api, token, application))["user_agent"] == "Custom/9.9"


@pytest.mark.parametrize(
    ("submitted", "expected"),
    [
        ({"plan": "pro", "seats": 3, "beta": True, "nested": {"a": [1, 2]}}, None),
        (["first", 2, {"three": 3}], None),
        (json.dumps({"plan": "pro", "seats": 3}), {"plan": "pro", "seats": 3}),
    ],
    ids=["object", "list", "json-encoded-string"],
)
async def test_submit_properties_are_returned_as_submitted(api, token, application, submitted, expected):
    await submit(api, application, {**VALID, "properties": submitted})

    thread = await only_thread(api, token, application)
    assert thread["properties"] == (submitted if expected is None else expected)


@pytest.mark.parametrize(
    "tags",
    ['["bug", "export"]', "bug,export", " bug , export ", ["bug", "export"]],
    ids=["json-encoded-array", "comma-separated", "comma-separated-with-spaces", "json-list"],
)
async def test_submit_tags_are_added_to_the_thread(api, token, application, tags):
    await submit(api, application, {**VALID, "tags": tags})

    assert sorted((await only_thread(api, token, application))["tags"]) == ["bug", "export"]


@pytest.mark.parametrize("nps", [0, 5, 10])
async def test_submit_accepts_an_nps_rating_from_0_to_10(api, token, application, nps):
    response = await submit(api, application, {**VALID, "nps": nps})

    await assert_text(response, 201, "Feedback sent!")
    assert (await only_thread(api, token, application))["nps"] == nps


async def test_submit_message_of_three_characters_is_accepted(api, token, application):
    response = await submit(api, application, {**VALID, "message": "  abc  "})

    await assert_text(response, 201, "Feedback sent!")
    assert (await only_thread(api, token, application))["message"] == "abc"


async def test_submit_with_the_javascript_key_is_accepted(api, application):
    response = await submit(api, application, VALID, key=application.key_javascript)

    await assert_text(response, 201, "Feedback sent!")


async def test_submit_attaches_uploads_of_the_same_application(api, token, application):
    ids = await upload_ids(api, application, ("notes.txt", b"hello world"), ("shot.png", PNG))

    response = await submit(api, application, {**VALID, "attachments": ids})

    await assert_text(response, 201, "Feedback sent!")
    attachments = (await only_thread(api, token, application))["attachments"]
    assert [a["id"] for a in attachments] == ids
    assert [(a["name"], a["mime_type"], a["size"]) for a in attachments] == [
        ("notes.txt", "text/plain", 11),
        ("shot.png", "image/png", len(PNG)),
    ]
    for attachment in attachments:
        assert attachment["url"].startswith(f"{BASE_URL}/files/attachments/{attachment['id']}/")


# --- submit: errors (seed §7) ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"message": "The export button does nothing."}, "Your email address is required"),
        ({"email": "", "message": "The export button does nothing."}, "Your email address is required"),
        ({"email": "not-an-email", "message": "The export button does nothing."}, "Invalid email address"),
        ({"email": "ann@", "message": "The export button does nothing."}, "Invalid email address"),
        ({"email": "ann@example.org"}, "Your message is required"),
        ({"email": "ann@example.org", "message": ""}, "Your message is required"),
        ({"email": "ann@example.org", "message": "ab"}, "Your message is too short"),
        ({"email": "ann@example.org", "message": "  ab  "}, "Your message is too short"),
        ({**VALID, "nps": 11}, "Invalid NPS rating"),
        ({**VALID, "nps": -1}, "Invalid NPS rating"),
        ({**VALID, "nps": "x"}, "Invalid NPS rating"),
        ({**VALID, "sentiment": "happy"}, "Invalid sentiment"),
    ],
    ids=[
        "email-missing",
        "email-empty",
        "email-malformed",
        "email-without-domain",
        "message-missing",
        "message-empty",
        "message-too-short",
        "message-too-short-after-trim",
        "nps-11",
        "nps-minus-1",
        "nps-not-a-number",
        "sentiment-unknown",
    ],
)
async def test_submit_with_an_invalid_field_is_rejected_and_writes_nothing(api, application, body, message):
    response = await submit(api, application, body)

    await assert_text(response, 400, message)
    assert await nothing_written(application)


async def test_submit_with_a_wrong_key_is_not_authorized(api, application):
    response = await submit(api, application, VALID, key="wrong-key")

    await assert_text(response, 403, "Not authorized")
    assert await nothing_written(application)


async def test_submit_without_a_key_is_not_authorized(api, application):
    response = await api.post(capture_path(application.id, "submit"), json=VALID)

    await assert_text(response, 403, "Not authorized")


@pytest.mark.parametrize("application_id", [UNKNOWN_ID, "abc"])
async def test_submit_for_an_unknown_application_is_application_not_found(api, db, application_id):
    response = await api.post(capture_path(application_id, "submit", "any-key"), json=VALID)

    await assert_text(response, 404, "Application not found")


async def test_submit_checks_the_application_before_the_key_and_body(api, db):
    response = await api.post(
        capture_path(UNKNOWN_ID, "submit", "wrong-key"),
        data=b"{not json",
        headers={"Content-Type": "application/json"},
    )

    await assert_text(response, 404, "Application not found")


async def test_submit_checks_the_key_before_the_body(api, application):
    response = await submit(api, application, {"message": "no email"}, key="wrong-key")

    await assert_text(response, 403, "Not authorized")


@pytest.mark.parametrize("payload", [b"{not json", b"[1, 2, 3]", b'"just a string"'])
async def test_submit_with_a_body_that_is_not_a_json_object_is_invalid(api, application, payload):
    response = await api.post(
        capture_path(application.id, "submit", application.key_api),
        data=payload,
        headers={"Content-Type": "application/json"},
    )

    await assert_text(response, 400, "Invalid request body")
    assert await nothing_written(application)


async def test_submit_with_an_attachment_of_another_application_is_rejected(api, agent, application):
    other = await make_application(agent)
    foreign_ids = await upload_ids(api, other, ("notes.txt", b"hello"))

    response = await submit(api, application, {**VALID, "attachments": foreign_ids})

    await assert_text(response, 400, "Invalid attachments")
    assert await nothing_written(application)
    assert (await Attachment.get(id=foreign_ids[0])).feedback_id is None


async def test_submit_with_an_unknown_attachment_is_rejected(api, token, application):
    response = await submit(api, application, {**VALID, "attachments": [UNKNOWN_ID]})

    await assert_text(response, 400, "Invalid attachments")
    assert await nothing_written(application)
    assert await threads(api, token, application) == []


async def test_submit_with_a_known_and_an_unknown_attachment_writes_nothing(api, application):
    ids = await upload_ids(api, application, ("notes.txt", b"hello"))

    response = await submit(api, application, {**VALID, "attachments": [ids[0], UNKNOWN_ID]})

    await assert_text(response, 400, "Invalid attachments")
    assert await nothing_written(application)
    assert (await Attachment.get(id=ids[0])).feedback_id is None


async def test_submit_with_an_attachment_already_used_by_a_thread_is_rejected(api, token, application):
    ids = await upload_ids(api, application, ("notes.txt", b"hello"))
    first = await submit(api, application, {**VALID, "attachments": ids})
    assert first.status_code == 201

    response = await submit(
        api, application, {"email": "bob@example.org", "message": "Me too!", "attachments": ids}
    )

    await assert_text(response, 400, "Invalid attachments")
    listed = await threads(api, token, application)
    assert [thread["email"] for thread in listed] == ["ann@example.org"]
    assert not await Member.filter(application_id=application.id, email="bob@example.org").exists()


async def test_failed_submit_leaves_the_thread_count_unchanged(api, token, application):
    failed = await submit(api, application, {**VALID, "attachments": [UNKNOWN_ID]})
    assert failed.status_code == 400

    response = await api.get(f"/applications/{application.id}/feedback", token)

    assert (await body_json(response))["pagination"]["total"] == 0


# --- translations ---------------------------------------------------------------------------


@pytest.mark.parametrize("language", ["es", "pt"])
async def test_submit_success_is_translated(api, application, language):
    response = await submit(api, application, {**VALID, "language": language})

    await assert_text(response, 201, TRANSLATIONS[language]["Feedback sent!"])


@pytest.mark.parametrize("language", ["es", "pt"])
@pytest.mark.parametrize(
    ("body", "english"),
    [
        ({"message": "The export button does nothing."}, "Your email address is required"),
        ({**VALID, "nps": 11}, "Invalid NPS rating"),
    ],
    ids=["email-missing", "nps"],
)
async def test_submit_errors_are_translated(api, application, language, body, english):
    response = await submit(api, application, {**body, "language": language})

    await assert_text(response, 400, TRANSLATIONS[language][english])


@pytest.mark.parametrize("language", ["es", "pt"])
async def test_submit_with_a_wrong_key_is_translated_from_the_body_language(api, application, language):
    response = await submit(api, application, {**VALID, "language": language}, key="wrong-key")

    await assert_text(response, 403, TRANSLATIONS[language]["Not authorized"])


@pytest.mark.parametrize("language", ["es", "pt"])
async def test_submit_for_an_unknown_application_is_translated(api, db, language):
    response = await api.post(
        capture_path(UNKNOWN_ID, "submit", "any-key"), json={**VALID, "language": language}
    )

    await assert_text(response, 404, TRANSLATIONS[language]["Application not found"])


@pytest.mark.parametrize("language", ["fr", "xx", ""])
async def test_submit_in_an_unknown_language_answers_in_english(api, application, language):
    response = await submit(api, application, {**VALID, "language": language})

    await assert_text(response, 201, "Feedback sent!")


@pytest.mark.parametrize("language", ["es", "pt"])
async def test_upload_errors_are_translated_from_the_query_language(api, agent, language):
    application = await make_application(agent, uploads_enabled=False)

    response = await api.post(
        capture_path(application.id, "upload", application.key_api, language=language),
        files=as_files(("a.txt", b"first")),
    )

    await assert_text(response, 400, TRANSLATIONS[language]["Uploads not enabled"])


@pytest.mark.parametrize("language", ["es", "pt"])
async def test_open_errors_are_translated_from_the_query_language(api, application, language):
    response = await api.post(capture_path(application.id, "open", "wrong-key", language=language))

    await assert_text(response, 403, TRANSLATIONS[language]["Not authorized"])


# --- CORS -----------------------------------------------------------------------------------


@pytest.mark.parametrize("action", ["open", "upload", "submit"])
async def test_cors_preflight_of_a_capture_path_succeeds(client, application, action):
    response = await client.options(
        capture_path(application.id, action, application.key_javascript),
        headers={
            "Origin": "https://customer.example",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type",
        },
    )

    assert 200 <= response.status_code < 300
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    methods = [m.strip() for m in response.headers["Access-Control-Allow-Methods"].split(",")]
    assert "POST" in methods
    allowed = [h.strip().lower() for h in response.headers["Access-Control-Allow-Headers"].split(",")]
    assert "content-type" in allowed


async def test_cors_header_is_on_a_successful_open(api, application):
    response = await api.post(
        capture_path(application.id, "open", application.key_javascript),
        headers={"Origin": "https://customer.example"},
    )

    assert response.status_code == 201
    assert response.headers["Access-Control-Allow-Origin"] == "*"


async def test_cors_header_is_on_a_successful_submit(api, application):
    response = await submit(api, application, VALID, headers={"Origin": "https://customer.example"})

    assert response.status_code == 201
    assert response.headers["Access-Control-Allow-Origin"] == "*"


async def test_cors_header_is_on_a_successful_upload(api, application):
    response = await upload(api, application, ("a.txt", b"first"))

    assert response.status_code == 201
    assert response.headers["Access-Control-Allow-Origin"] == "*"


@pytest.mark.parametrize("action", ["open", "upload", "submit"])
async def test_cors_header_is_on_a_wrong_key_error(api, application, action):
    response = await api.post(
        capture_path(application.id, action, "wrong-key"), headers={"Origin": "https://customer.example"}
    )

    assert response.status_code == 403
    assert response.headers["Access-Control-Allow-Origin"] == "*"


@pytest.mark.parametrize("action", ["open", "upload", "submit"])
async def test_cors_header_is_on_an_unknown_application_error(api, db, action):
    response = await api.post(capture_path(UNKNOWN_ID, action, "any-key"))

    assert response.status_code == 404
    assert response.headers["Access-Control-Allow-Origin"] == "*"


async def test_cors_header_is_on_a_validation_error(api, application):
    response = await submit(api, application, {"message": "no email here"})

    assert response.status_code == 400
    assert response.headers["Access-Control-Allow-Origin"] == "*"
