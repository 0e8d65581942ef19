"""The paths app.links builds are the routes' own."""

from __future__ import annotations

from quart import Quart

from app.links import thread_path


async def test_a_threads_path_is_the_one_its_route_builds(app: Quart) -> None:
    adapter = app.url_map.bind("localhost")
    for application_id, feedback_id in [(1, 1), (1, 987654), (42, 7), (42, 2**31 - 1)]:
        built = adapter.build(
            "views.threads.show_thread", {"application_id": application_id, "feedback_id": feedback_id}
        )

        assert thread_path(application_id, feedback_id) == built
