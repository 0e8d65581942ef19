"""Assignment: a thread belongs to one agent of its application, or to nobody.

The agents of an application are its creator and the members of its organization; assigning a
thread to anyone else is refused (400). Assigning is open to every agent, as archiving is, and
writes in the caller's transaction: the threads that changed announce ``feedback.updated`` (the
thread's JSON carries ``assignee``) and the assignee is e-mailed when their notification mode for
the application is ``instant`` (:func:`app.services.notifications.threads_assigned`), never for
threads they assigned to themselves.

Whom a thread may be assigned to is read on every inbox and thread page (the assignee picker,
the "left" mark), so each worker keeps an application's agents for ``CACHE_SECONDS``
(:class:`app.services.invalidation.ApplicationCache`). A member who joins or leaves drops the
organization's applications from the caches at once here and, with Redis, everywhere
(:func:`app.services.organizations.members_changed`); a renamed agent shows under the new name
within those two seconds. Assigning always checks the assignee afresh
(:func:`check_assignee`), so a stale list never lets anyone assign to a stranger.

An agent who leaves the organization keeps the threads assigned to them: their name stays on
those threads, shown as having left, until someone assigns them again (unassigning would write,
and announce, every such thread at once in the leaving member's transaction). The inbox's Mine
is the signed-in agent's; someone who left sees the application no longer.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from app.errors import ValidationError
from app.repositories import applications, threads
from app.repositories.accounts import AgentRow, UserRow
from app.repositories.applications import ApplicationRow
from app.services import notifications
from app.services.invalidation import ApplicationCache
from app.services.validation import parse_int, valid_id
from app.services.webhooks import events

NOT_AN_AGENT = "The assignee must be an agent of the application."
INVALID_ASSIGNEE = "The assignee id field must be a user id or null."


_agents: ApplicationCache[list[AgentRow]] = ApplicationCache(applications.agents_of_application)


async def agents(application: ApplicationRow) -> list[AgentRow]:
    """Whom the application's threads may be assigned to: its creator and its organization's
    members, by name (kept for two seconds: see the module's docstring)."""
    return await _agents.get(application.id) or []


def parse_assignee_id(value: object) -> int | None:
    """An ``assignee_id`` as a client sends it: a user id, or null (or an empty text) for nobody."""
    if value is None or value == "":
        return None
    number = parse_int(value) if not isinstance(value, bool) else None
    if number is None or not valid_id(number):
        raise ValidationError(INVALID_ASSIGNEE)
    return number


async def check_assignee(application: ApplicationRow, assignee_id: int | None) -> UserRow | None:
    """The agent a thread of the application may be assigned to (None: nobody); anyone else is
    refused."""
    if assignee_id is None:
        return None
    agent = await applications.agent_of_application(application.id, assignee_id)
    if agent is None:
        raise ValidationError(NOT_AN_AGENT)
    return agent


async def unchanged(feedback_id: int, assignee_id: int | None) -> bool:
    """Whether the thread is assigned to ``assignee_id`` already (inside the transaction): then
    there is nothing to check or write, even for an assignee who has left since."""
    return await threads.assignee_id_of(feedback_id) == assignee_id


async def write_assignment(
    application: ApplicationRow,
    feedback_ids: Sequence[int],
    assignee: UserRow | None,
    actor: UserRow | None,
    announce: bool = True,
) -> list[int]:
    """Assign threads of the application inside the caller's transaction; the ids that changed.

    Those announce ``feedback.updated`` (unless ``announce`` is false: the caller announces its
    whole change once); the assignee hears of them by e-mail (one message for them all) when
    they chose ``instant`` and did not assign them to themselves.
    """
    changed = await threads.assign(
        application.id, feedback_ids, None if assignee is None else assignee.id, datetime.now(UTC)
    )
    if not changed:
        return changed
    if announce:
        await events.announce_threads(events.UPDATED, {application.id: changed})
    if assignee is not None and (actor is None or actor.id != assignee.id):
        await notifications.threads_assigned(application, assignee, actor, changed)
    return changed
