"""The links a page builds from an endpoint's pattern are the addresses url_for builds."""

from __future__ import annotations

import pytest
from quart import url_for

from app.views.addresses import IdLinks, address

FILTERS = {"status": "archived", "q": "refund & 50% off?", "tag": "été #1", "assignee": "mine"}
THREAD_ACTIONS = (
    "show_thread",
    "archive_thread",
    "create_reply",
    "newer_replies",
    "add_tag",
    "delete_thread",
)


@pytest.mark.parametrize("name", THREAD_ACTIONS)
async def test_thread_action_links_are_url_for_addresses(app, name):
    async with app.test_request_context("/app"):
        for feedback_id in (3456, 7):  # the second thread's links from the kept pattern
            link = IdLinks(FILTERS, application_id=12, feedback_id=feedback_id)
            expected = url_for(f"views.threads.{name}", application_id=12, feedback_id=feedback_id, **FILTERS)
            # The first through url_for (which gives the query), the next from the pattern.
            assert link(f"views.threads.{name}") == expected
            assert link(f"views.threads.{name}") == expected


async def test_further_ids_are_formatted_into_the_path(app):
    async with app.test_request_context("/app"):
        link = IdLinks({"q": "a b"}, application_id=1, feedback_id=2)
        link("views.threads.show_thread")  # the query, as url_for writes it

        assert link("views.threads.remove_tag", tag_id=99) == url_for(
            "views.threads.remove_tag", application_id=1, feedback_id=2, tag_id=99, q="a b"
        )


async def test_an_id_the_path_does_not_take_goes_to_url_for(app):
    async with app.test_request_context("/app"):
        link = IdLinks({"tag": "x"}, application_id=5, feedback_id=6)

        assert link.pattern("views.inbox.list_threads", ("application_id", "feedback_id")) is None
        assert link("views.inbox.list_threads") == url_for(
            "views.inbox.list_threads", application_id=5, feedback_id=6, tag="x"
        )


async def test_links_under_a_root_path_keep_it(app):
    async with app.test_request_context("/app"):
        plain = IdLinks({}, application_id=1, feedback_id=2)("views.threads.archive_thread")
    async with app.test_request_context("/app", root_path="/earful"):
        prefixed = IdLinks({}, application_id=1, feedback_id=2)("views.threads.archive_thread")
        expected = url_for("views.threads.archive_thread", application_id=1, feedback_id=2)

    assert prefixed == expected and prefixed == "/earful" + plain


async def test_links_by_id_are_url_for_addresses(app):
    async with app.test_request_context("/app"):
        thread_link = IdLinks(FILTERS, application_id=3).by_id("views.threads.show_thread", "feedback_id")

        for feedback_id in (1, 42, 2_000_000_000):
            assert thread_link(feedback_id) == url_for(
                "views.threads.show_thread", application_id=3, feedback_id=feedback_id, **FILTERS
            )


async def test_links_by_id_with_the_stand_in_in_the_query_are_still_right(app):
    async with app.test_request_context("/app"):
        query = {"q": "987654300"}
        thread_link = IdLinks(query, application_id=3).by_id("views.threads.show_thread", "feedback_id")

        assert thread_link(8) == url_for(
            "views.threads.show_thread", application_id=3, feedback_id=8, **query
        )


async def test_top_bar_addresses_are_url_for_addresses(app):
    async with app.test_request_context("/app", root_path="/under"):
        for endpoint in ("views.home", "views.account.show_account", "docs.api_reference"):
            assert address(endpoint) == address(endpoint) == url_for(endpoint)


async def test_an_applications_tabs_are_url_for_addresses(app):
    async with app.test_request_context("/app", root_path="/under"):
        for endpoint in ("views.inbox.list_threads", "views.stats.show_stats", "views.demo.show_demo"):
            assert address(endpoint, application_id=7) == address(endpoint, application_id=7)
            assert address(endpoint, application_id=7) == url_for(endpoint, application_id=7)


async def test_an_address_with_an_argument_that_is_not_an_id_is_url_fors(app):
    async with app.test_request_context("/app"):
        assert address("views.inbox.list_threads", application_id=7, status="archived") == url_for(
            "views.inbox.list_threads", application_id=7, status="archived"
        )
