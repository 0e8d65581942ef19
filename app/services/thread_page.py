"""Everything the thread page shows, read with its thread.

Besides the thread with its replies, files and tags, the page shows whom it may be assigned to,
the e-mail status of each reply sent, whether the plan includes internal notes and the saved
replies of the reply box: three reads of their own, and the agents, which each worker keeps
for two seconds (app.services.assignment). On PostgreSQL each read outside the thread's
statement was a round trip of its own (about a tenth of a millisecond of the worker's CPU and
as much of the database's, against a page of three), so they go in the thread's one statement
(app.repositories.thread_parts.thread_with_parts_and); SQLite reads them in turn, in process.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.errors import NotFound
from app.repositories import applications, outbox, saved_replies, thread_parts
from app.repositories.accounts import AgentRow, plan_of_rows
from app.repositories.applications import ApplicationRow
from app.repositories.saved_replies import SavedReplyRow, saved_reply_of
from app.services import assignment
from app.services.plans import notes_included, plan_or_free
from app.services.thread_details import ThreadDetails, details_of


@dataclass
class ThreadPage:
    """A thread with everything its page shows beside it."""

    details: ThreadDetails
    agents: list[AgentRow]
    """Whom the thread may be assigned to (app.services.assignment.agents), by name."""
    deliveries: dict[int, str]
    """The outbox status of each e-mailed reply, by reply id."""
    notes_allowed: bool
    saved_replies: list[SavedReplyRow]


async def load_thread_page(application: ApplicationRow, feedback_id: int) -> ThreadPage:
    """One thread of an application and what its page shows; 'Invalid feedback' for any
    other id."""
    found = await thread_parts.thread_with_parts_and(
        application.id,
        feedback_id,
        [
            outbox.statuses_of_thread_query(feedback_id),
            applications.plan_of_application_query(application.organization_id, application.owner_id),
            saved_replies.saved_replies_for_query(application.id, application.organization_id),
        ],
    )
    if found is None:
        raise NotFound("Invalid feedback")
    thread, parts, (statuses, plan, saved) = found
    return ThreadPage(
        details=await details_of(thread, parts),
        agents=await assignment.agents(application),
        deliveries=outbox.statuses_of_rows(statuses),
        notes_allowed=notes_included(plan_or_free(plan_of_rows(plan))),
        saved_replies=[saved_reply_of(row) for row in saved],
    )
