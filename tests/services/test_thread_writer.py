"""Group commit of new threads: submits that arrive together share one transaction, never a fate."""

from __future__ import annotations

import asyncio

import pytest

from app.config import Quotas
from app.db import atomic
from app.errors import ValidationError
from app.models import Application, Feedback, FeedbackTag, Member, Tag, WebhookDelivery
from app.repositories.applications import ApplicationRow
from app.repositories.threads import ThreadRow
from app.services.feedback import create_thread
from app.services.submissions import parse_submission
from app.services.thread_writer import _writers, known_tags
from tests.factories import make_application, make_webhook


def _submission(**body: object):
    body.setdefault("message", "The export button does nothing.")
    return parse_submission(body, "203.0.113.7", "pytest/1.0")


async def _tag_counts(application: ApplicationRow) -> dict[str, int]:
    return {tag.name: tag.open_count for tag in await Tag.filter(application_id=application.id)}


async def test_concurrent_submits_are_all_written_with_their_senders_tags_and_counts(
    application: ApplicationRow,
) -> None:
    bodies = [
        {"email": f"c{n % 7}@example.org", "name": f"Name {n}" if n % 2 else "", "tags": tags}
        for n, tags in enumerate([["bug"], ["bug", "ui"], [], ["ui", "billing"], ["bug"]] * 6)
    ]

    threads = await asyncio.gather(*(create_thread(application, _submission(**body)) for body in bodies))

    assert len({thread.id for thread in threads}) == 30
    stored = await Feedback.filter(application_id=application.id).count()
    assert stored == 30
    assert (await Application.get(id=application.id)).open_threads == 30
    assert await Member.filter(application_id=application.id).count() == 7
    assert await _tag_counts(application) == {"bug": 18, "ui": 12, "billing": 6}
    for thread, body in zip(threads, bodies, strict=True):
        linked = await FeedbackTag.filter(feedback_id=thread.id).values_list("tag__name", flat=True)
        assert sorted(linked) == sorted(body["tags"])
        member = await Member.get(id=(await Feedback.get(id=thread.id)).member_id)
        assert member.email == body["email"]


async def test_a_bad_submit_in_a_batch_fails_alone(application: ApplicationRow) -> None:
    good = [_submission(email=f"ok{n}@example.org", tags=["bug"]) for n in range(5)]
    bad = _submission(email="bad@example.org", attachments=[999_999], tags=["bug"])

    results = await asyncio.gather(
        *(create_thread(application, submission) for submission in [*good[:3], bad, *good[3:]]),
        return_exceptions=True,
    )

    assert isinstance(results[3], ValidationError)
    assert all(isinstance(result, ThreadRow) for n, result in enumerate(results) if n != 3)
    assert await Feedback.filter(application_id=application.id).count() == 5
    assert (await Application.get(id=application.id)).open_threads == 5
    assert await _tag_counts(application) == {"bug": 5}
    assert not await Member.filter(email="bad@example.org").exists()


async def test_a_thread_created_inside_a_transaction_rolls_back_with_it(application: ApplicationRow) -> None:
    async def work() -> None:
        await create_thread(application, _submission(email="jo@example.org"))
        raise ValidationError("stop")

    with pytest.raises(ValidationError):
        await atomic(work)

    assert not await Feedback.filter(application_id=application.id).exists()
    assert (await Application.get(id=application.id)).open_threads == 0


async def test_ids_of_deleted_threads_are_never_given_again(application: ApplicationRow) -> None:
    first = await create_thread(application, _submission(email="jo@example.org"))
    await atomic(lambda: Feedback.filter(id=first.id).delete())

    second = await create_thread(application, _submission(email="jo@example.org"))

    assert second.id > first.id


async def test_batches_keep_each_application_apart(agent, application: ApplicationRow) -> None:
    other = await make_application(agent, name="Other")

    await asyncio.gather(
        *(
            create_thread(app, _submission(email="same@example.org", tags=["bug"]))
            for app in [application, other] * 5
        )
    )

    for app in (application, other):
        assert (await Application.get(id=app.id)).open_threads == 5
        assert await _tag_counts(app) == {"bug": 5}
        assert await Member.filter(application_id=app.id).count() == 1


async def test_a_tag_id_this_worker_remembers_wrongly_is_looked_up_again(application: ApplicationRow) -> None:
    known_tags.learn({(application.id, "bug"): 999_999})

    thread = await create_thread(application, _submission(email="jo@example.org", tags=["bug"]))

    linked = await FeedbackTag.filter(feedback_id=thread.id).values_list("tag__name", flat=True)
    assert linked == ["bug"]
    assert await _tag_counts(application) == {"bug": 1}


async def test_a_sender_keeps_the_name_given_before_when_a_later_submit_has_none(
    application: ApplicationRow,
) -> None:
    await create_thread(application, _submission(email="jo@example.org", name="Jo"))
    await asyncio.gather(
        create_thread(application, _submission(email="jo@example.org")),
        create_thread(application, _submission(email="jo@example.org", name="")),
    )

    member = await Member.get(application_id=application.id, email="jo@example.org")
    assert member.name == "Jo"


async def test_a_batch_runs_the_same_statements_whatever_its_size(application: Application, queries) -> None:
    async def statements_for(count: int, prefix: str) -> int:
        queries.statements.clear()
        await asyncio.gather(
            *(
                create_thread(application, _submission(email=f"{prefix}{n}@example.org", tags=["bug", "ui"]))
                for n in range(count)
            )
        )
        return queries.count

    await statements_for(1, "warm")  # the tags exist and this worker knows their ids

    assert await statements_for(40, "many") == await statements_for(1, "one")


async def test_a_batch_announced_to_an_endpoint_runs_the_same_statements_whatever_its_size(
    agent, application: Application, hook_settings, queries
) -> None:
    await make_webhook(agent, application, "http://127.0.0.1:9/hooks", hook_settings)

    async def statements_for(count: int, prefix: str) -> int:
        queries.statements.clear()
        await asyncio.gather(
            *(
                create_thread(application, _submission(email=f"{prefix}{n}@example.org", tags=["bug"]))
                for n in range(count)
            )
        )
        return queries.count

    await statements_for(1, "warm")

    # (one event takes a statement fewer: it is inserted and its id returned, not reserved)
    assert await statements_for(40, "many") == await statements_for(2, "two")
    assert await WebhookDelivery.filter(status="pending").count() == 43


async def test_submits_waiting_when_the_worker_stops_are_answered_with_an_error(
    application: ApplicationRow,
) -> None:
    waiting = [
        asyncio.ensure_future(create_thread(application, _submission(email=f"w{n}@example.org")))
        for n in range(3)
    ]
    await asyncio.sleep(0)  # the submits are queued and the writer has started
    drainer = _writers[asyncio.get_running_loop()]._drainer
    assert drainer is not None
    drainer.cancel()

    results = await asyncio.gather(*waiting, return_exceptions=True)

    assert all(isinstance(result, asyncio.CancelledError | ThreadRow) for result in results)
    assert any(isinstance(result, asyncio.CancelledError) for result in results)


async def test_new_tags_past_the_applications_quota_are_left_out_and_the_thread_is_kept(
    application: ApplicationRow,
):
    quotas = Quotas(tags_per_application=2)
    await create_thread(application, _submission(email="a@example.org", tags=["bug", "ui"]), quotas)

    thread = await create_thread(application, _submission(email="b@example.org", tags=["bug", "new"]), quotas)

    assert await _tag_counts(application) == {"bug": 2, "ui": 1}
    assert await FeedbackTag.filter(feedback_id=thread.id).count() == 1


async def test_concurrent_submits_past_the_tags_quota_are_all_written(application: ApplicationRow):
    quotas = Quotas(tags_per_application=3)

    written = await asyncio.gather(
        *(
            create_thread(application, _submission(email=f"c{n}@example.org", tags=[f"t{n}"]), quotas)
            for n in range(8)
        )
    )

    assert len(written) == 8
    assert await Tag.filter(application_id=application.id).count() == 3
    assert await Feedback.filter(application_id=application.id).count() == 8
