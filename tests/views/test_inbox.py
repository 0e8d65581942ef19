"""The inbox page: threads newest first, filters, keyset paging, isolation and escaping."""

from __future__ import annotations

import re

import pytest

from app.models import Feedback
from app.services import search
from app.services.feedback import assign, set_archived, set_sentiment
from app.services.tags import add_tag_to_thread
from tests.factories import make_application, make_reply, make_thread, make_user, sign_in

XSS = "<script>alert(1)</script><img src=x onerror=alert(2)>"


@pytest.fixture
async def signed_in(client, agent):
    await sign_in(client, agent)
    return client


def inbox(application, query: str = "") -> str:
    return f"/app/applications/{application.id}/feedback{query}"


async def page(client, path: str) -> str:
    response = await client.get(path)
    assert response.status_code == 200
    assert response.mimetype == "text/html"
    return await response.get_data(as_text=True)


async def test_inbox_lists_threads_newest_first(signed_in, application):
    await make_thread(application, message="The oldest message")
    await make_thread(application, message="The middle message")
    await make_thread(application, message="The newest message")

    body = await page(signed_in, inbox(application))

    assert application.name in body
    assert (
        body.index("The newest message") < body.index("The middle message") < body.index("The oldest message")
    )
    assert "data-keyboard-list" in body and "data-keyboard-item" in body and "data-search" in body


async def test_inbox_rows_show_sender_sentiment_tags_nps_and_reply_state(signed_in, agent, application):
    thread = await make_thread(
        application,
        email="rita@example.org",
        name="Rita Reader",
        message="Love the new dashboard",
        sentiment="positive",
        nps=9,
        tags="billing",
    )
    await make_reply(agent, application, thread)

    body = await page(signed_in, inbox(application))

    assert "Rita Reader" in body and "rita@example.org" in body
    assert 'class="badge badge--positive"' in body
    assert "NPS 9" in body
    assert "billing" in body and "<circle" in body
    assert "Replied" in body
    assert re.search(r'<img class="avatar" src="/avatars/[0-9a-f]{20}\.svg\?i=RR"', body)
    assert re.search(r'<time [^>]*datetime="[^"]+" title="[^"]+ UTC">just now</time>', body)


async def test_inbox_rows_link_to_their_thread_with_the_inbox_filters(signed_in, application):
    first = await make_thread(application, message="Export fails / crash & burn", tags="bug")
    second = await make_thread(application, message="Export is slow", tags="bug")
    await set_archived(application, first, True)
    await set_archived(application, second, True)

    body = await page(signed_in, inbox(application, "?status=archived&tag=bug&q=Export"))

    links = re.findall(r'class="thread-row__link" href="([^"]+)"', body)
    query = "?status=archived&amp;tag=bug&amp;q=Export"
    base = f"/app/applications/{application.id}/feedback"
    assert links == [f"{base}/{second.id}{query}", f"{base}/{first.id}{query}"]
    assert (await signed_in.get(links[0].replace("&amp;", "&"))).status_code == 200


async def test_inbox_rows_show_each_threads_own_tags(signed_in, application):
    await make_thread(application, message="First", tags="billing")
    await make_thread(application, message="Second", tags=["bug", "billing"])
    await make_thread(application, message="Third")

    body = await page(signed_in, inbox(application))

    rows = re.findall(r'<li class="thread-row".*?</li>', body, re.S)
    chips = [re.findall(r'<span class="tag tag--dot">.*?</svg>([^<]*)</span>', row) for row in rows]
    assert chips == [[], ["billing", "bug"], ["billing"]]


async def test_inbox_rows_show_a_long_message_cut_at_220_characters(signed_in, application):
    await make_thread(application, message="word " * 60)  # 300 characters
    await make_thread(application, message="a" * 225)  # within Jinja's leeway of five

    body = await page(signed_in, inbox(application))

    excerpts = re.findall(r'<p class="thread-row__excerpt">([^<]*)</p>', body)
    assert excerpts == ["a" * 225, ("word " * 60)[:217] + "..."]


async def test_inbox_row_markup_is_the_same_in_the_page_and_in_a_live_inbox_fragment(signed_in, application):
    older = await make_thread(application, message="Dark mode & <b>more</b>", tags="ui", nps=3)
    newest = await make_thread(application, message="Newer")

    page_rows = re.findall(r'<li class="thread-row".*?</li>', await page(signed_in, inbox(application)), re.S)
    response = await signed_in.get(
        inbox(application, f"/newer?after={older.id - 1}"), headers={"HX-Request": "true"}
    )
    fragment_rows = re.findall(r'<li class="thread-row".*?</li>', await response.get_data(as_text=True), re.S)

    assert len(page_rows) == 2 and f'id="thread-{newest.id}"' in page_rows[0]
    assert fragment_rows == page_rows


async def _correct_sentiment(agent, application, thread):
    await set_sentiment(application, thread, "negative")
    return "badge--negative"


async def _assign_to_self(agent, application, thread):
    await assign(agent, application, thread, agent.id)
    return f"→ {agent.name}"


async def _tag(agent, application, thread):
    await add_tag_to_thread(application, thread, "billing")
    return "billing</span>"


async def _reply(agent, application, thread):
    await make_reply(agent, application, thread)
    return '<span class="replied">'


@pytest.mark.parametrize("change", [_correct_sentiment, _assign_to_self, _tag, _reply])
async def test_inbox_row_drawn_before_shows_a_later_change_of_its_thread(
    signed_in, agent, application, change
):
    thread = await make_thread(application, message="Slow export", sentiment="positive")
    await page(signed_in, inbox(application))  # the row is drawn, and kept

    shown = await change(agent, application, thread)
    body = await page(signed_in, inbox(application))

    row = re.findall(r'<li class="thread-row".*?</li>', body, re.S)[0]
    assert shown in row


async def test_inbox_row_shows_a_renamed_sender_after_it_was_drawn(signed_in, application):
    thread = await make_thread(application, email="ana@example.org", name="Ana", message="Hello there")
    assert '<strong class="thread-row__name">Ana</strong>' in await page(signed_in, inbox(application))

    await make_thread(application, email="ana@example.org", name="Ana Lima", message="Hello again")
    body = await page(signed_in, inbox(application))

    rows = re.findall(r'<li class="thread-row".*?</li>', body, re.S)
    assert len(rows) == 2 and all("Ana Lima" in row for row in rows), thread.id


async def test_inbox_marks_threads_without_a_reply(signed_in, application):
    await make_thread(application)

    body = await page(signed_in, inbox(application))

    assert "Awaiting reply" in body


async def test_inbox_shows_open_threads_by_default_and_archived_on_request(signed_in, application):
    await make_thread(application, message="Still open please")
    archived = await make_thread(application, message="Already archived")
    await set_archived(application, archived, True)

    open_body = await page(signed_in, inbox(application))
    archived_body = await page(signed_in, inbox(application, "?status=archived"))

    assert "Still open please" in open_body and "Already archived" not in open_body
    assert "Already archived" in archived_body and "Still open please" not in archived_body


async def test_inbox_filters_by_sentiment(signed_in, application):
    await make_thread(application, message="Happy thread here", sentiment="positive")
    await make_thread(application, message="Angry thread here", sentiment="negative")

    body = await page(signed_in, inbox(application, "?sentiment=negative"))

    assert "Angry thread here" in body and "Happy thread here" not in body


async def test_inbox_filters_by_tag(signed_in, application):
    await make_thread(application, message="Tagged with billing", tags="billing")
    await make_thread(application, message="Tagged with bugs", tags="bugs")

    body = await page(signed_in, inbox(application, "?tag=billing"))

    assert "Tagged with billing" in body and "Tagged with bugs" not in body


async def test_inbox_search_matches_the_message(signed_in, application):
    await make_thread(application, message="The export button does nothing")
    await make_thread(application, message="Please add dark mode")

    body = await page(signed_in, inbox(application, "?q=EXPORT"))

    assert "The export button does nothing" in body and "Please add dark mode" not in body


async def test_inbox_search_matches_the_sender_email_and_name(signed_in, application):
    await make_thread(application, email="zed@corp.example", message="First sender writes")
    await make_thread(application, email="amy@example.org", name="Amy Pond", message="Second sender writes")

    by_email = await page(signed_in, inbox(application, "?q=corp.example"))
    by_name = await page(signed_in, inbox(application, "?q=pond"))

    assert "First sender writes" in by_email and "Second sender writes" not in by_email
    assert "Second sender writes" in by_name and "First sender writes" not in by_name


async def test_inbox_pages_by_keyset_with_older_and_newest_links(signed_in, application):
    for number in range(55):
        await make_thread(application, message=f"Message number {number:02d}.")

    first = await page(signed_in, inbox(application))
    older = re.search(r'href="([^"]*before=(\d+)[^"]*)"', first)

    assert first.count("data-keyboard-item") == 50
    assert "Message number 54." in first and "Message number 05." in first
    assert "Message number 04." not in first
    assert older is not None
    second = await page(signed_in, older.group(1).replace("&amp;", "&"))
    assert second.count("data-keyboard-item") == 5
    assert "Message number 04." in second and "Message number 00." in second
    assert "Message number 05." not in second
    assert "Newest" in second and "before=" not in second.split("Newest")[0].rsplit("href=", 1)[-1]


async def test_inbox_htmx_request_gets_only_the_results_fragment(signed_in, application):
    await make_thread(application, message="Fragment thread")

    response = await signed_in.get(inbox(application, "?q=fragment"), headers={"HX-Request": "true"})

    body = await response.get_data(as_text=True)
    assert response.status_code == 200
    assert body.lstrip().startswith('<section id="inbox-results"')
    assert "Fragment thread" in body and "<html" not in body


async def test_inbox_empty_state(signed_in, application):
    body = await page(signed_in, inbox(application))

    assert "Inbox zero." in body


async def test_inbox_empty_state_with_filters_offers_to_clear_them(signed_in, application):
    await make_thread(application)

    body = await page(signed_in, inbox(application, "?q=nothing-matches-this"))

    assert "No feedback matches these filters." in body


async def test_inbox_of_another_agents_application_is_not_found(app, signed_in, application):
    await make_thread(application, message="Secret feedback")
    other = app.test_client()
    await sign_in(other, await make_user(email="eve@example.com"))

    response = await other.get(inbox(application))

    assert response.status_code == 404
    assert "Secret feedback" not in await response.get_data(as_text=True)


async def test_inbox_of_an_out_of_range_id_is_not_found(signed_in):
    response = await signed_in.get("/app/applications/99999999999/feedback")

    assert response.status_code == 404


async def test_inbox_requires_sign_in(client, application):
    response = await client.get(inbox(application))

    assert response.status_code == 302
    assert response.headers["Location"].startswith("/app/login")


async def test_inbox_escapes_untrusted_text(signed_in, application):
    await make_thread(application, message=XSS, name="<b>Bold</b> Name", tags="<i>tag</i>")

    body = await page(signed_in, inbox(application))

    assert "<script>alert(1)" not in body and "<img src=x" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert "<b>Bold</b>" not in body and "&lt;b&gt;Bold&lt;/b&gt; Name" in body
    assert "<i>tag</i>" not in body and "&lt;i&gt;tag&lt;/i&gt;" in body


async def test_inbox_query_count_does_not_grow_with_the_threads(signed_in, agent, queries):
    small = await make_application(agent)
    large = await make_application(agent)
    for index in range(3):
        await make_thread(small, tags="one,two", nps=index)
    for index in range(30):
        await make_thread(large, tags="one,two", nps=index % 11)

    queries.statements.clear()
    await page(signed_in, inbox(small))
    few = queries.count
    queries.statements.clear()
    await page(signed_in, inbox(large))

    assert queries.count == few
    assert few <= 8


async def test_inbox_counts_come_from_the_application_counters(signed_in, application):
    for _ in range(2):
        await make_thread(application)
    archived = await make_thread(application)
    await set_archived(application, archived, True)

    body = await page(signed_in, inbox(application))

    assert re.search(r'Open <span class="count">2</span>', body)
    assert re.search(r'Archived <span class="count">1</span>', body)
    assert await Feedback.filter(application_id=application.id).count() == 3


async def test_inbox_search_that_stopped_early_offers_to_search_older_threads(
    signed_in, application, monkeypatch
):
    monkeypatch.setattr(search, "SCAN_WINDOW", 0)
    monkeypatch.setattr(search, "MAX_CANDIDATES", 2)
    await make_thread(application, message="Export was slow in May.", sentiment="negative")
    await make_thread(application, message="Export works.", sentiment="positive")
    await make_thread(application, message="Export works well.", sentiment="positive")

    body = await page(signed_in, inbox(application, "?q=export&sentiment=negative"))
    older = re.search(r'href="([^"]*before=\d+[^"]*)"', body)

    assert "No matches among the newest threads searched." in body
    assert older is not None
    second = await page(signed_in, older.group(1).replace("&amp;", "&"))
    assert "Export was slow in May." in second
