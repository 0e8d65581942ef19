"""The capture API's quotas: what one public widget key may make an application store, refused
with a translated 400 or 413 that writes nothing (tags past the application's quota are left out)."""

from __future__ import annotations

import dataclasses

import pytest

from app import create_app
from app.config import Quotas
from app.models import Attachment, Feedback, Tag
from tests.api.test_capture import VALID, as_files, assert_text, capture_path, nothing_written, submit, upload
from tests.factories import Api

ES = {
    "Too many files": "Demasiados archivos",
    "Upload quota exceeded for today": "Se ha superado la cuota de subida de hoy",
    "Too many tags": "Demasiadas etiquetas",
    "Tag name too long": "Nombre de etiqueta demasiado largo",
    "Properties too large": "Propiedades demasiado grandes",
}
PT = {
    "Too many files": "Arquivos demais",
    "Upload quota exceeded for today": "Cota de envio de hoje excedida",
    "Too many tags": "Tags demais",
    "Tag name too long": "Nome de tag longo demais",
    "Properties too large": "Propriedades grandes demais",
}
TEXTS = {"en": {text: text for text in ES}, "es": ES, "pt": PT}
LANGUAGES = ["en", "es", "pt"]


@pytest.fixture
async def small_quota_api(settings):
    """The capture API of a deployment whose applications may upload 100 bytes a day."""
    limited = create_app(
        dataclasses.replace(settings, quotas=Quotas(upload_bytes_per_day=100)), manage_db=False
    )
    async with limited.test_app():
        yield Api(limited.test_client())


def _files(count: int) -> list[tuple[str, bytes]]:
    return [(f"{n}.txt", b"x") for n in range(count)]


@pytest.mark.parametrize("language", LANGUAGES)
async def test_an_upload_of_more_files_than_the_quota_is_a_translated_400(api, application, language):
    path = capture_path(application.id, "upload", application.key_api, language=language)
    files = _files(Quotas().files_per_upload + 1)
    response = await api.post(path, files=as_files(*files))

    await assert_text(response, 400, TEXTS[language]["Too many files"])
    assert not await Attachment.exists()


async def test_an_upload_of_as_many_files_as_the_quota_is_accepted(api, application):
    response = await upload(api, application, *_files(Quotas().files_per_upload))

    assert response.status_code == 201


@pytest.mark.parametrize("language", LANGUAGES)
async def test_an_upload_past_the_days_quota_is_a_translated_413(small_quota_api, application, language):
    assert (await upload(small_quota_api, application, ("a.bin", b"x" * 60))).status_code == 201
    response = await small_quota_api.post(
        capture_path(application.id, "upload", application.key_api, language=language),
        files=as_files(("b.bin", b"x" * 41)),
    )

    await assert_text(response, 413, TEXTS[language]["Upload quota exceeded for today"])
    assert await Attachment.all().count() == 1


@pytest.mark.parametrize(
    ("fields", "english"),
    [
        ({"tags": [f"t{n}" for n in range(11)]}, "Too many tags"),
        ({"tags": ["x" * 51]}, "Tag name too long"),
        ({"attachments": list(range(1, 12))}, "Too many files"),
        ({"properties": {"notes": "x" * 16 * 1024}}, "Properties too large"),
    ],
)
@pytest.mark.parametrize("language", LANGUAGES)
async def test_a_submit_over_a_quota_is_a_translated_400_that_writes_nothing(
    api, application, fields, english, language
):
    response = await submit(api, application, {**VALID, **fields, "language": language})

    await assert_text(response, 400, TEXTS[language][english])
    assert await nothing_written(application)
    assert not await Tag.exists()


async def test_a_submit_past_the_applications_tags_quota_keeps_the_feedback(settings, application):
    limited = create_app(
        dataclasses.replace(settings, quotas=Quotas(tags_per_application=1)), manage_db=False
    )
    async with limited.test_app():
        api = Api(limited.test_client())
        await submit(api, application, {**VALID, "tags": ["bug"]})

        response = await submit(api, application, {**VALID, "tags": ["bug", "new"]})

    await assert_text(response, 201, "Feedback sent!")
    assert await Feedback.filter(application_id=application.id).count() == 2
    assert [tag.name for tag in await Tag.filter(application_id=application.id)] == ["bug"]
    assert (await Tag.get(application_id=application.id, name="bug")).open_count == 2
