"""Tags of applications, their links to threads, and the thread counts kept on each tag."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from app.repositories.sql import (
    Row,
    change,
    change_returning,
    columns,
    insert_rows,
    moment,
    one_of,
    parameters,
    postgres,
    read_moment,
    select,
    select_one,
)


@dataclass(frozen=True, slots=True)
class TagLabel:
    """What a tag's chip shows: its name and colour, which never change once the tag exists
    (there is no rename, and the colour follows from the name, app.services.tags.color_for)."""

    id: int
    name: str
    color: str


@dataclass(slots=True)
class TagRow:
    """A tag of an application, with its counts of open and archived threads."""

    id: int
    application_id: int
    name: str
    color: str
    open_count: int
    archived_count: int
    created_at: datetime


def by_name(tag: TagLabel | TagRow) -> tuple[str, int]:
    """The order a thread's tags are shown in: by name (then id)."""
    return (tag.name, tag.id)


TAG_COLUMNS = ("id", "application_id", "name", "color", "open_count", "archived_count", "created_at")


def tag_of(row: Row, alias: str = "t") -> TagRow:
    return TagRow(
        id=row[f"{alias}.id"],
        application_id=row[f"{alias}.application_id"],
        name=row[f"{alias}.name"],
        color=row[f"{alias}.color"],
        open_count=row[f"{alias}.open_count"],
        archived_count=row[f"{alias}.archived_count"],
        created_at=read_moment(row[f"{alias}.created_at"]),
    )


async def tags_of_application(application_id: int) -> list[TagRow]:
    """Every tag of an application, by name."""
    rows = await select(
        f"SELECT {columns('t', TAG_COLUMNS)} FROM tags t WHERE t.application_id = {{}} ORDER BY t.name, t.id",
        [application_id],
    )
    return [tag_of(row) for row in rows]


async def labels_of_tags(application_id: int, tag_ids: Sequence[int]) -> list[TagLabel]:
    """The labels of the application's tags among ``tag_ids``."""
    of_tags, values = one_of("id", list(tag_ids))
    rows = await select(
        f"SELECT id, name, color FROM tags WHERE application_id = {{}} AND {of_tags}",
        [application_id, *values],
    )
    return [TagLabel(row["id"], row["name"], row["color"]) for row in rows]


async def tag_id(application_id: int, name: str) -> int | None:
    """The id of the application's tag named ``name``."""
    row = await select_one(
        "SELECT id FROM tags WHERE application_id = {} AND name = {}", [application_id, name]
    )
    return None if row is None else int(row["id"])


async def tag_named(application_id: int, name: str) -> TagRow | None:
    """The application's tag named ``name``, with its counts."""
    row = await select_one(
        f"SELECT {columns('t', TAG_COLUMNS)} FROM tags t WHERE t.application_id = {{}} AND t.name = {{}}",
        [application_id, name],
    )
    return None if row is None else tag_of(row)


async def tags_named(application_id: int, names: Sequence[str]) -> list[TagRow]:
    """The application's tags among ``names``."""
    if not names:
        return []
    rows = await select(
        f"SELECT {columns('t', TAG_COLUMNS)} FROM tags t WHERE t.application_id = {{}} "
        f"AND t.name IN ({parameters(len(names))})",
        [application_id, *names],
    )
    return [tag_of(row) for row in rows]


async def count_up_to(application_id: int, most: int) -> int:
    """How many tags the application has, counting no further than ``most`` (an index range
    of at most that many entries, however many tags an application gathered before a limit)."""
    row = await select_one(
        "SELECT COUNT(*) AS total FROM (SELECT 1 FROM tags WHERE application_id = {} LIMIT {}) counted",
        [application_id, most],
    )
    return int(row["total"]) if row else 0


async def search_tags(application_id: int, text: str, limit: int) -> list[TagRow]:
    """The application's tags whose name contains ``text``, by name, at most ``limit``.

    The (application, name) index is walked in name order and the walk stops at the
    ``limit``-th match, so a common text reads a few entries; a rare one reads the
    application's tags, which the capture quota keeps to about a thousand.
    """
    rows = await select(*search_statement(application_id, text, limit))
    return [tag_of(row) for row in rows]


def search_statement(application_id: int, text: str, limit: int) -> tuple[str, list[object]]:
    """The statement of :func:`search_tags` (its plan is tested); names are unique in an
    application, so the name alone orders them, as the index does."""
    contains = "strpos(t.name, {}) > 0" if postgres() else "instr(t.name, {}) > 0"
    return (
        f"SELECT {columns('t', TAG_COLUMNS)} FROM tags t WHERE t.application_id = {{}} AND {contains} "
        "ORDER BY t.name LIMIT {}",
        [application_id, text, limit],
    )


async def ensure_tags(application_id: int, colors: Mapping[str, str], now: datetime) -> list[TagRow]:
    """Create the tags (name -> colour) that do not exist yet, writing first; returns all of them."""
    names = list(colors)
    groups = ", ".join("({}, {}, {}, 0, 0, {})" for _ in names)
    values: list[object] = []
    for name in names:
        values += [application_id, name, colors[name], moment(now)]
    await change(
        "INSERT INTO tags (application_id, name, color, open_count, archived_count, created_at) "
        f"VALUES {groups} ON CONFLICT (application_id, name) DO NOTHING",
        values,
    )
    rows = await select(
        f"SELECT {columns('t', TAG_COLUMNS)} FROM tags t WHERE t.application_id = {{}} "
        f"AND t.name IN ({parameters(len(names))})",
        [application_id, *names],
    )
    return [tag_of(row) for row in rows]


def tag_ids_column() -> str:
    """A column of a thread's (``f``) tag ids, off the links' (feedback_id, tag_id) index: an
    integer array on PostgreSQL, a comma-separated text (NULL for none) on SQLite, both read
    by :func:`read_tag_ids`. A page of threads reads its tags with it in its own statement."""
    links = "FROM feedback_tags l WHERE l.feedback_id = f.id"
    if postgres():
        return f"ARRAY(SELECT l.tag_id {links}) AS tag_ids"
    return f"(SELECT group_concat(l.tag_id) {links}) AS tag_ids"


def read_tag_ids(value: object) -> tuple[int, ...]:
    """The tag ids of a :func:`tag_ids_column`, in no order."""
    if isinstance(value, str):
        return tuple(int(tag_id) for tag_id in value.split(","))
    return tuple(value) if isinstance(value, list) else ()


def tag_links_query(feedback_ids: Sequence[int]) -> tuple[str, list[object]]:
    """The tag ids of threads, read from the (feedback_id, tag_id) index alone: what a thread's
    representation shows of a tag is its label, which each worker keeps
    (app.services.tag_labels.TagLabels), so the tags themselves are not read with their links.
    app.repositories.thread_parts reads it with others in one round trip; :func:`tag_ids_by_thread`
    reads its rows."""
    of_threads, values = one_of("feedback_id", list(dict.fromkeys(feedback_ids)))
    return f"SELECT feedback_id, tag_id FROM feedback_tags WHERE {of_threads}", values


async def tag_ids_of_threads(feedback_ids: Sequence[int]) -> dict[int, list[int]]:
    """The tag ids of threads, by thread id (an empty list for a thread without any)."""
    if not feedback_ids:
        return {}
    return tag_ids_by_thread(feedback_ids, await select(*tag_links_query(feedback_ids)))


def tag_ids_by_thread(feedback_ids: Sequence[int], rows: Sequence[Row]) -> dict[int, list[int]]:
    """The rows of :func:`tag_links_query` as each thread's tag ids."""
    found: dict[int, list[int]] = {feedback_id: [] for feedback_id in feedback_ids}
    for row in rows:
        found[row["feedback_id"]].append(row["tag_id"])
    return found


async def tags_of_threads(feedback_ids: Sequence[int]) -> dict[int, list[TagRow]]:
    """The tags of threads with their counts, by thread id and then by name, in one statement;
    each tag is one object however many of the threads carry it."""
    if not feedback_ids:
        return {}
    of_threads, values = one_of("l.feedback_id", list(dict.fromkeys(feedback_ids)))
    rows = await select(
        f"SELECT l.feedback_id AS thread, {columns('t', TAG_COLUMNS)} FROM feedback_tags l "
        f"JOIN tags t ON t.id = l.tag_id WHERE {of_threads}",
        values,
    )
    return _tags_by_thread(feedback_ids, rows)


def _tags_by_thread(feedback_ids: Sequence[int], rows: Sequence[Row]) -> dict[int, list[TagRow]]:
    """The rows of :func:`tags_of_threads` as each thread's tags, by name (an empty list for a
    thread without any)."""
    found: dict[int, list[TagRow]] = {feedback_id: [] for feedback_id in feedback_ids}
    tags: dict[int, TagRow] = {}
    for row in rows:
        tag = tags.get(row["t.id"])
        if tag is None:
            tag = tags[row["t.id"]] = tag_of(row)
        found[row["thread"]].append(tag)
    for thread_tags in found.values():
        thread_tags.sort(key=by_name)
    return found


async def link(feedback_id: int, tag_id: int) -> bool:
    """Link a thread to a tag; False when it was linked already."""
    return (
        await change(
            "INSERT INTO feedback_tags (feedback_id, tag_id) VALUES ({}, {}) "
            "ON CONFLICT (feedback_id, tag_id) DO NOTHING",
            [feedback_id, tag_id],
        )
        > 0
    )


async def insert_links(links: Sequence[tuple[int, int]]) -> None:
    """Link many (thread, tag) pairs that are not linked yet."""
    await insert_rows("feedback_tags", ("feedback_id", "tag_id"), links)


async def links_per_tag(feedback_ids: Sequence[int]) -> dict[int, int]:
    """How many of these threads each tag has."""
    if not feedback_ids:
        return {}
    rows = await select(
        "SELECT tag_id, COUNT(*) AS total FROM feedback_tags "
        f"WHERE feedback_id IN ({parameters(len(feedback_ids))}) GROUP BY tag_id",
        list(feedback_ids),
    )
    return {int(row["tag_id"]): int(row["total"]) for row in rows}


async def links_per_thread(feedback_ids: Sequence[int]) -> dict[int, int]:
    """How many tags each of these threads has (threads without one are left out)."""
    if not feedback_ids:
        return {}
    rows = await select(
        "SELECT feedback_id, COUNT(*) AS total FROM feedback_tags "
        f"WHERE feedback_id IN ({parameters(len(feedback_ids))}) GROUP BY feedback_id",
        list(feedback_ids),
    )
    return {int(row["feedback_id"]): int(row["total"]) for row in rows}


async def link_many(tag_id: int, feedback_ids: Sequence[int]) -> list[int]:
    """Link threads to a tag; the ids of the threads that were not linked to it yet."""
    if not feedback_ids:
        return []
    groups = ", ".join("({}, {})" for _ in feedback_ids)
    rows = await change_returning(
        f"INSERT INTO feedback_tags (feedback_id, tag_id) VALUES {groups} "
        "ON CONFLICT (feedback_id, tag_id) DO NOTHING RETURNING feedback_id",
        [value for feedback_id in feedback_ids for value in (feedback_id, tag_id)],
    )
    return sorted(int(row["feedback_id"]) for row in rows)


async def unlink_many(tag_id: int, feedback_ids: Sequence[int]) -> list[int]:
    """Unlink threads from a tag; the ids of the threads that were linked to it."""
    if not feedback_ids:
        return []
    rows = await change_returning(
        f"DELETE FROM feedback_tags WHERE tag_id = {{}} AND feedback_id IN ({parameters(len(feedback_ids))}) "
        "RETURNING feedback_id",
        [tag_id, *feedback_ids],
    )
    return sorted(int(row["feedback_id"]) for row in rows)


async def links_of_thread(feedback_id: int) -> int:
    row = await select_one(
        "SELECT COUNT(*) AS total FROM feedback_tags WHERE feedback_id = {}", [feedback_id]
    )
    return int(row["total"]) if row else 0


async def unlink(application_id: int, feedback_id: int, tag_id: int) -> bool:
    """Unlink a thread from one of its application's tags; False when it was not linked."""
    return (
        await change(
            "DELETE FROM feedback_tags WHERE feedback_id = {} AND tag_id IN "
            "(SELECT id FROM tags WHERE id = {} AND application_id = {})",
            [feedback_id, tag_id, application_id],
        )
        > 0
    )


async def add_to_counts(moves: Mapping[int, tuple[int, int]]) -> None:
    """Move tags' counts: tag id -> (open delta, archived delta), in one statement for every tag.

    Two transactions that lock two tags in opposite orders deadlock, which PostgreSQL breaks
    only after a second (``deadlock_timeout``), failing one of them. Neither separate updates
    nor ``WHERE id IN (...)`` lock in a set order: on a table as small as this one PostgreSQL
    scans the heap, where every update moves a tag's row, so two workers' group commits of the
    same tags met in opposite orders (submits of two servers on one database: p99 1-2 s). On
    PostgreSQL the rows are therefore locked first by a sub-select in id order, with the lock an
    UPDATE takes (``FOR NO KEY UPDATE``): ``FOR UPDATE`` would also wait for the transactions
    that linked threads to these tags (a link's foreign key holds ``FOR KEY SHARE`` on its tag
    until commit), a deadlock of its own between two group commits. SQLite has one writer at a
    time.
    """
    moved = sorted((tag_id, deltas) for tag_id, deltas in moves.items() if any(deltas))
    if not moved:
        return
    settings: list[str] = []
    values: list[object] = []
    # A column no tag moves is left out: a submit moves only open counts.
    for position, column in enumerate(("open_count", "archived_count")):
        if any(deltas[position] for _, deltas in moved):
            cases = " ".join(f"WHEN {{}} THEN {column} + {{}}" for _ in moved)
            settings.append(f"{column} = CASE id {cases} END")
            values += [value for tag_id, deltas in moved for value in (tag_id, deltas[position])]
    values += [tag_id for tag_id, _ in moved]
    chosen = parameters(len(moved))
    if postgres():
        await change(
            f"UPDATE tags SET {', '.join(settings)} FROM (SELECT id AS locked_id FROM tags "
            f"WHERE id IN ({chosen}) ORDER BY id FOR NO KEY UPDATE) AS locked "
            "WHERE tags.id = locked.locked_id",
            values,
        )
    else:
        await change(f"UPDATE tags SET {', '.join(settings)} WHERE id IN ({chosen})", values)
