"""The statements of the inbox's text search: the plain scan, and the look-ups in the trigram
indexes (FTS5 tables of SQLite's search file, filled by app.repositories.search_index; pg_trgm
GIN indexes on PostgreSQL). See app.services.search."""

from __future__ import annotations

from collections.abc import Sequence

from tortoise.filters import escape_like
from tortoise.transactions import in_transaction

from app.repositories.sql import Row, one_of, postgres, script, select, select_one
from app.repositories.threads import id_condition, newest_first

# The plain scan of an inbox page (``f`` the thread, ``m`` its sender): the message, the
# sender's e-mail or name contains the pattern. The same expression as the ORM's ``icontains``,
# which the trigram indexes of PostgreSQL serve.
SCAN_CONDITION = "({})".format(
    " OR ".join(
        f"UPPER(CAST({column} AS VARCHAR)) LIKE UPPER({{}}) ESCAPE '\\'"
        for column in ("f.message", "m.email", "m.name")
    )
)
MESSAGE_CONDITION = "UPPER(CAST(f.message AS VARCHAR)) LIKE UPPER({}) ESCAPE '\\'"


def _holds(column: str) -> str:
    """The test that ``column`` holds the text ``{}``, in any case, written so that no index
    serves it: the same test as ``LIKE`` of :func:`contains_pattern` (which the trigram indexes
    serve)."""
    position = "strpos" if postgres() else "instr"
    return f"{position}(UPPER(CAST({column} AS VARCHAR)), UPPER({{}})) > 0"


def scan_among_senders(text: str, senders: Sequence[int]) -> tuple[str, list[object]]:
    """The condition of a scan that knows every sender who may match (:func:`matching_senders`):
    the message holds ``text``, or the sender is one of ``senders`` and their e-mail or name
    holds it.

    It reads no sender of the other threads: joined to each of the 2,000 threads of a search's
    window to test their text, the senders cost PostgreSQL 20-40 ms of its 40 ms for a rare
    word, and SQLite 5 of 8 ms (benchmarks/notes.md). A sender's text is still tested, so one
    whose name changed since SQLite's search file indexed it does not match by the old name.
    Written as a test no index serves, so that PostgreSQL walks the window: for a word it
    guessed rare it read the trigram index instead, all of the word's threads (17-28 ms for a
    word of one thread in twenty, against 2 ms for the window).
    """
    message = _holds("f.message")
    if not senders:
        return message, [text]
    among, values = one_of("f.member_id", senders)
    sender = f"(SELECT {_holds('s.email')} OR {_holds('s.name')} FROM members s WHERE s.id = f.member_id)"
    return f"({message} OR ({among} AND {sender}))", [text, *values, text, text]


_NO_CURSOR = 2**63 - 1
# CROSS JOIN fixes the join order: SQLite would otherwise scan the application's threads and
# probe the index once per thread whenever its statistics make that look cheaper.
_SQLITE_MESSAGE_MATCHES = (
    "SELECT s.rowid AS id FROM search.feedback_search s CROSS JOIN feedback f ON f.id = s.rowid "
    "WHERE s.message LIKE {} AND f.application_id = {} AND f.archived = {} AND s.rowid < {} "
    "ORDER BY s.rowid DESC LIMIT {}"
)
_SQLITE_SENDER_MATCHES = (
    "SELECT id FROM (SELECT m.id FROM search.members_search s CROSS JOIN members m ON m.id = s.rowid "
    "WHERE s.email LIKE {} AND m.application_id = {} LIMIT {}) "
    "UNION SELECT id FROM (SELECT m.id FROM search.members_search s CROSS JOIN members m ON m.id = s.rowid "
    "WHERE s.name LIKE {} AND m.application_id = {} LIMIT {})"
)
# What the search file does not hold yet, read from the main file (at most a look-up's
# CATCH_UP rows, see app.services.search): the rows above its progress mark, and those whose
# text changed since they were indexed (removals not applied yet).
_PROGRESS = "(SELECT last_id FROM search.search_progress WHERE name = '{}')"
_CHANGED = f"(SELECT row_id FROM search_removals WHERE name = '{{}}' AND id > {_PROGRESS.format('removals')})"
_SENDER_LIKE = (
    "(UPPER(CAST(m.email AS VARCHAR)) LIKE UPPER({}) ESCAPE '\\' "
    "OR UPPER(CAST(m.name AS VARCHAR)) LIKE UPPER({}) ESCAPE '\\')"
)
_SQLITE_UNINDEXED_MESSAGE_MATCHES = " UNION ".join(
    "SELECT f.id AS id FROM feedback f WHERE "
    + rows
    + " AND f.application_id = {} AND f.archived = {} AND f.id < {} AND "
    + MESSAGE_CONDITION
    for rows in (f"f.id > {_PROGRESS.format('feedback')}", f"f.id IN {_CHANGED.format('feedback')}")
)
_SQLITE_UNINDEXED_SENDER_MATCHES = " UNION ".join(
    "SELECT m.id AS id FROM members m WHERE " + rows + " AND m.application_id = {} AND " + _SENDER_LIKE
    for rows in (f"m.id > {_PROGRESS.format('members')}", f"m.id IN {_CHANGED.format('members')}")
)
_TRIGRAMS_ONLY = "SET LOCAL enable_indexscan = off; SET LOCAL enable_seqscan = off"
_POSTGRES_SENDER_MATCHES = (
    "SELECT id FROM members WHERE application_id = {} "
    "AND (UPPER(CAST(email AS VARCHAR)) LIKE UPPER({}) ESCAPE '\\' "
    "OR UPPER(CAST(name AS VARCHAR)) LIKE UPPER({}) ESCAPE '\\') LIMIT {}"
)


def contains_pattern(text: str) -> str:
    """The LIKE pattern of "contains ``text``", its wildcards taken literally."""
    return f"%{escape_like(text)}%"


def _below(before: int | None) -> tuple[list[str], list[object]]:
    if before is None:
        return [], []
    condition, value = id_condition("<", before)
    return [condition], [value]


def scan_window_statement(
    application_id: int, archived: bool, before: int | None, window: int
) -> tuple[str, list[object]]:
    """The statement of the id just below the newest ``window`` threads below the cursor, read
    off the plain index by application, state and id (its plan is tested against the indexes).

    Not off PostgreSQL's ``-id`` index, which pages read (:func:`newest_first`): its ``OFFSET``
    fetched every skipped thread from the table, since PostgreSQL reads no ``id`` out of an index
    on ``-id``. Backwards through the plain index it reads the index alone (an index-only scan):
    15.7-19.8 against 6.4 ms to skip 50,000 open threads of a million, 0.63 against 0.27 ms for
    2,000. The whole order is spelt out, so that no plan can serve it off the primary key."""
    conditions = ["f.application_id = {}", "f.archived = {}"]
    values: list[object] = [application_id, archived]
    if before is not None:
        conditions.append("f.id < {}")
        values.append(before)
    return (
        f"SELECT f.id AS id FROM feedback f WHERE {' AND '.join(conditions)} "
        "ORDER BY f.application_id DESC, f.archived DESC, f.id DESC LIMIT 1 OFFSET {}",
        [*values, window],
    )


async def scan_window_floor(
    application_id: int, archived: bool, before: int | None, window: int
) -> int | None:
    """The oldest id of the newest ``window`` threads below the cursor; None when there are no
    more threads than that."""
    oldest = await select_one(*scan_window_statement(application_id, archived, before, window))
    return int(oldest["id"]) + 1 if oldest else None


async def _threads_below(
    application_id: int,
    archived: bool,
    before: int | None,
    condition: str,
    values: Sequence[object],
    limit: int,
) -> list[int]:
    extra, extra_values = _below(before)
    conditions = ["f.application_id = {}", "f.archived = {}", condition, *extra]
    rows = await select(
        f"SELECT f.id AS id FROM feedback f WHERE {' AND '.join(conditions)} {newest_first()} LIMIT {{}}",
        [application_id, archived, *values, *extra_values, limit],
    )
    return [int(row["id"]) for row in rows]


async def _sender_matches(application_id: int, text: str, cap: int) -> list[int]:
    if postgres():
        like = contains_pattern(text)
        rows = await select(_POSTGRES_SENDER_MATCHES, [application_id, like, like, cap])
    else:
        rows = await _sqlite_sender_matches(application_id, text, cap)
    return [int(row["id"]) for row in rows]


async def _candidates(
    application_id: int, archived: bool, text: str, before: int | None, limit: int, senders: Sequence[int]
) -> tuple[list[int], list[int]]:
    if postgres():
        by_message = await _threads_below(
            application_id, archived, before, MESSAGE_CONDITION, [contains_pattern(text)], limit
        )
    else:
        by_message = await _sqlite_message_matches(application_id, archived, text, before, limit)
    if not senders:
        return by_message, []
    of_senders, values = one_of("f.member_id", senders)
    by_sender = await _threads_below(application_id, archived, before, of_senders, values, limit)
    return by_message, by_sender


async def _sqlite_sender_matches(application_id: int, text: str, cap: int) -> list[Row]:
    pattern, like = f"%{text}%", contains_pattern(text)
    indexed = [pattern, application_id, cap, pattern, application_id, cap]
    unindexed = [application_id, like, like] * 2
    return await select(
        f"SELECT id FROM ({_SQLITE_SENDER_MATCHES} UNION {_SQLITE_UNINDEXED_SENDER_MATCHES}) LIMIT {{}}",
        [*indexed, *unindexed, cap],
    )


async def _sqlite_message_matches(
    application_id: int, archived: bool, text: str, before: int | None, limit: int
) -> list[int]:
    """The newest ``limit`` threads below the cursor whose message holds ``text``: from the
    search file, and from what it does not hold yet. Some may no longer hold it (their new text
    is not indexed yet): the page reads the threads with the text condition again."""
    cursor = before if before is not None else _NO_CURSOR
    rows = await select(
        f"SELECT id FROM ({_SQLITE_MESSAGE_MATCHES}) UNION {_SQLITE_UNINDEXED_MESSAGE_MATCHES}",
        [
            f"%{text}%",
            application_id,
            archived,
            cursor,
            limit,
            *[application_id, archived, cursor, contains_pattern(text)] * 2,
        ],
    )
    return sorted((int(row["id"]) for row in rows), reverse=True)[:limit]


async def matching_senders(application_id: int, text: str, max_senders: int) -> list[int] | None:
    """An application's senders whose e-mail or name holds ``text``, from the trigram indexes;
    None when more than ``max_senders`` do (the indexes would not help).

    PostgreSQL guesses the rows a ``LIKE '%text%'`` matches from the pattern's length alone, so
    the look-up runs with plain index and sequential scans switched off: it can then only read
    the trigram indexes.
    """
    if postgres():
        async with in_transaction():  # SET LOCAL lasts until the end of the transaction
            await script(_TRIGRAMS_ONLY)
            senders = await _sender_matches(application_id, text, max_senders + 1)
    else:
        senders = await _sender_matches(application_id, text, max_senders + 1)
    return None if len(senders) > max_senders else senders


async def candidates(
    application_id: int, archived: bool, text: str, before: int | None, limit: int, senders: Sequence[int]
) -> tuple[list[int], list[int]]:
    """The newest ``limit`` threads below the cursor whose message holds ``text``, from the
    trigram indexes, and the newest ``limit`` threads of ``senders`` (:func:`matching_senders`), read
    as :func:`matching_senders` reads on PostgreSQL."""
    if not postgres():
        return await _candidates(application_id, archived, text, before, limit, senders)
    async with in_transaction():
        await script(_TRIGRAMS_ONLY)
        return await _candidates(application_id, archived, text, before, limit, senders)
