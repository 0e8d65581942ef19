"""The management API's saved replies: an application's (managed by any of its agents) and an
organization's (read by its members, managed by its owners), and a saved reply's text filled
for one thread.

Every list and item operation exists under both owners, ``/applications/<id>/saved-replies...``
and ``/organizations/<id>/saved-replies...``, served by the same handler;
:mod:`app.services.saved_replies` holds the rules of both.
"""

from __future__ import annotations

from quart import Blueprint, Response

from app.api.auth import current_user, require_scope
from app.api.common import NOT_A_JSON_OBJECT, json_response, parse_id, read_body
from app.api.owners import routes_under_both_owners
from app.repositories.saved_replies import SavedReplyRow
from app.representations import filled_reply_json, saved_reply_json
from app.services import saved_replies
from app.services.applications import get_application
from app.services.feedback import get_thread
from app.services.saved_replies import INVALID_SAVED_REPLY, Scope

blueprint = Blueprint("saved_replies", __name__)

route = routes_under_both_owners(blueprint, "/saved-replies")


async def _scope(owner: dict[str, str]) -> Scope:
    """The saved replies of the path's application or organization, as the user sees them."""
    user = current_user()
    if "organization_id" in owner:
        organization_id = parse_id(owner["organization_id"], "Invalid organization")
        return await saved_replies.organization_scope(user, organization_id)
    application = await get_application(user, parse_id(owner["application_id"], "Invalid application"))
    return saved_replies.application_scope(application)


async def _saved_reply(owner: dict[str, str], saved_reply_id: str) -> tuple[Scope, SavedReplyRow]:
    scope = await _scope(owner)
    found = await saved_replies.get_saved_reply(scope, parse_id(saved_reply_id, INVALID_SAVED_REPLY))
    return scope, found


@route("", "GET")
@require_scope("read")
async def list_saved_replies(**owner: str) -> Response:
    """The owner's saved replies, by title."""
    scope = await _scope(owner)
    found = await saved_replies.list_saved_replies(scope)
    return json_response({"data": [saved_reply_json(saved) for saved in found]})


@route("", "POST")
@require_scope("write")
async def create_saved_reply(**owner: str) -> Response:
    """A new saved reply: 201."""
    scope = await _scope(owner)
    body = await read_body(NOT_A_JSON_OBJECT)
    saved = await saved_replies.create_saved_reply(current_user(), scope, body)
    return json_response({"data": saved_reply_json(saved)}, 201)


@route("/<saved_reply_id>", "GET")
@require_scope("read")
async def show_saved_reply(saved_reply_id: str, **owner: str) -> Response:
    _, saved = await _saved_reply(owner, saved_reply_id)
    return json_response({"data": saved_reply_json(saved)})


@route("/<saved_reply_id>", "PATCH")
@require_scope("write")
async def update_saved_reply(saved_reply_id: str, **owner: str) -> Response:
    """Change the fields sent; the other keeps its value."""
    scope, saved = await _saved_reply(owner, saved_reply_id)
    body = await read_body(NOT_A_JSON_OBJECT)
    changed = await saved_replies.update_saved_reply(scope, saved, body)
    return json_response({"data": saved_reply_json(changed)})


@route("/<saved_reply_id>", "DELETE")
@require_scope("write")
async def delete_saved_reply(saved_reply_id: str, **owner: str) -> Response:
    scope, saved = await _saved_reply(owner, saved_reply_id)
    await saved_replies.delete_saved_reply(scope, saved)
    return Response(status=204)


@blueprint.get("/applications/<application_id>/feedback/<feedback_id>/saved-replies/<saved_reply_id>")
@require_scope("read")
async def fill_saved_reply(application_id: str, feedback_id: str, saved_reply_id: str) -> Response:
    """A saved reply of the application or of its organization, its placeholders filled with
    the thread's sender and the application: the text to send as a reply."""
    application = await get_application(current_user(), parse_id(application_id, "Invalid application"))
    thread = await get_thread(application, parse_id(feedback_id, "Invalid feedback"))
    filled = await saved_replies.fill_for_thread(
        application, thread, parse_id(saved_reply_id, INVALID_SAVED_REPLY)
    )
    return json_response({"data": filled_reply_json(filled.saved, filled.text, thread.id)})
