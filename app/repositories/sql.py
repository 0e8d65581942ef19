"""The one idiom of plain SQL in Earful: statement templates whose ``{}`` are parameters.

Only repositories import this module. A template is written once for both databases; its
``{}`` become ``?`` on SQLite and ``$1, $2 ...`` on PostgreSQL, in order. Where the two
databases need different SQL, the repository branches on :func:`postgres`, and nowhere else.

- :func:`select` and :func:`select_one` read. Outside a transaction on a SQLite file they run
  first on the event loop's thread within a budget of steps (app.quick_reads), and otherwise on
  the worker's reading connection (see :func:`app.db.open_database`), so a page never waits
  behind the worker's write transactions; on PostgreSQL, in a view that shares one connection
  for its reads (app.shared_reads), to that connection.
- :func:`change` and :func:`change_returning` write, and only inside a transaction
  (:func:`app.db.transactional`); outside one they raise at once.
- :func:`insert_rows` inserts many rows with multi-row statements.

Rows are mappings by column name. Values come as the driver gives them: SQLite's date-times are
ISO text and its booleans integers, PostgreSQL's JSON is text; :func:`read_moment`,
:func:`read_json` and ``bool`` make them Python values, in the repositories' row readers.
"""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, date, datetime
from typing import Any

import orjson
from tortoise import connections
from tortoise.backends.base.client import BaseDBAsyncClient, TransactionalDBClient

from app.db import opened_dialect, quick_reader, reading_connection
from app.db_clients import WriteOutsideTransaction, check_not_a_write
from app.shared_reads import shared_connection

Row = Mapping[str, Any]

MAX_VARIABLES = 30_000  # bound parameters per statement (SQLite allows 32766, PostgreSQL 32767)
ROWS_PER_STATEMENT = 200


def postgres() -> bool:
    """Whether the database is PostgreSQL (else SQLite)."""
    dialect = opened_dialect() or connections.get("default").capabilities.dialect
    return bool(dialect == "postgres")


def parameters(count: int) -> str:
    """``{}, {}, ...``: ``count`` parameters of a template (an ``IN`` list)."""
    return ", ".join("{}" for _ in range(count))


def one_of(column: str, values: Sequence[object]) -> tuple[str, list[object]]:
    """The condition "``column`` is one of ``values``" as a template and its parameters.

    On PostgreSQL one array parameter (``= ANY({})``), so that the statement's text is the same
    however many values there are: asyncpg prepares it once per connection and PostgreSQL may
    keep its plan, where an ``IN`` list made a statement of its own for every count (the reply
    ids of a page vary from page to page), prepared and planned anew. A single value goes as a
    plain parameter: PostgreSQL keeps the generic plan of ``column = $1``, where it prices that of
    ``= ANY($1)`` for an array of several values, finds a one-value array cheaper planned afresh
    and plans it again on every run (tests/repositories/test_plan_cache.py). SQLite takes the
    list."""
    if postgres():
        if len(values) == 1:
            return f"{column} = {{}}", [values[0]]
        return f"{column} = ANY({{}})", [list(values)]
    return f"{column} IN ({parameters(len(values))})", list(values)


@functools.lru_cache(maxsize=1024)
def _marks(count: int, postgres: bool) -> tuple[str, ...]:
    if postgres:
        return tuple(f"${number}" for number in range(1, count + 1))
    return ("?",) * count


def _statement(template: str, count: int, client: BaseDBAsyncClient) -> str:
    return template.format(*_marks(count, client.capabilities.dialect == "postgres"))


def _rows(rows: Sequence[Any]) -> list[Row]:
    """SQLite's rows as dicts: ``sqlite3.Row`` finds a column by comparing names one by one, a
    dict built once finds it by hashing (a row of a thread is read column by column)."""
    if rows and isinstance(rows[0], sqlite3.Row):
        names = rows[0].keys()
        return [dict(zip(names, row, strict=True)) for row in rows]
    return list(rows)


async def select(template: str, values: Sequence[object] = ()) -> list[Row]:
    """The rows of a query (outside a transaction, on the view's shared connection if it has
    one: app.shared_reads)."""
    client = connections.get("default")  # looked up once: each lookup walks Tortoise's context
    if not isinstance(client, TransactionalDBClient):
        shared, quick = shared_connection(), quick_reader()
        if shared is not None or quick is not None:
            statement = _statement(template, len(values), client)
            check_not_a_write(statement)
            if shared is not None:
                return await shared.fetch(statement, values)
            if quick is not None and (rows := quick.fetch(statement, values)) is not None:
                return rows
        client = reading_connection()
    return await select_on(client, template, values)


async def select_on(client: BaseDBAsyncClient, template: str, values: Sequence[object] = ()) -> list[Row]:
    """The rows of a query on a given connection (the search indexer's: app.search_db)."""
    _, rows = await client.execute_query(_statement(template, len(values), client), list(values))
    return _rows(rows)


async def select_together(queries: Sequence[tuple[str, Sequence[object]]]) -> list[list[Row]]:
    """The rows of several queries, each as :func:`select` would give them, in one round trip
    on PostgreSQL: one statement whose columns are the queries' rows as JSON arrays.

    Each statement sent to PostgreSQL costs a round trip through the kernel on both sides,
    however small the statement, and on a machine the workers share with the database that is
    much of a read's CPU (benchmarks/notes.md); in-process SQLite statements cost less than
    decoding the JSON would, so SQLite runs the queries in turn.
    Rows come as JSON gives them: date-times as ISO text (:func:`read_moment` reads it, as it
    reads SQLite's), JSON columns already decoded (:func:`read_json` lets them through); what
    orjson refuses (a number past a double, which a JSON column may hold) is decoded as
    :func:`read_json` decodes it.
    ``json_agg`` has no partial form, so PostgreSQL aggregates each query's rows in the order
    its ``ORDER BY`` gives them."""
    if not postgres():
        return [await select(template, values) for template, values in queries]
    row = await select_one(*together_statement(queries))
    assert row is not None  # a SELECT without FROM returns its one row
    return [read_json(row[str(number)]) for number in range(len(queries))]


def together_statement(queries: Sequence[tuple[str, Sequence[object]]]) -> tuple[str, list[object]]:
    """The one statement of :func:`select_together` on PostgreSQL, and its parameters."""
    template = "SELECT " + ", ".join(
        f"(SELECT COALESCE(json_agg(q), '[]') FROM ({query}) q) AS \"{number}\""
        for number, (query, _) in enumerate(queries)
    )
    return template, [value for _, values in queries for value in values]


async def select_one(template: str, values: Sequence[object] = ()) -> Row | None:
    """The first row of a query, or None."""
    rows = await select(template, values)
    return rows[0] if rows else None


def _writer() -> BaseDBAsyncClient:
    client = connections.get("default")
    if not isinstance(client, TransactionalDBClient):
        raise WriteOutsideTransaction("repositories write only inside app.db.transactional")
    return client


async def change(template: str, values: Sequence[object] = ()) -> int:
    """Run an INSERT, UPDATE or DELETE; how many rows it changed."""
    client = _writer()
    if client.capabilities.dialect == "postgres":
        statement = _statement(template, len(values), client)
        # The command tag ends with the count ("UPDATE 3", "INSERT 0 1"); Tortoise's client reads
        # the second word, the OID of an INSERT.
        async with client.acquire_connection() as connection:
            client.log.debug("%s: %s", statement, values)  # as Tortoise logs every statement
            tag = await connection.execute(statement, *values)
        return int(tag.rsplit(" ", 1)[-1]) if tag and tag.rsplit(" ", 1)[-1].isdigit() else 0
    return await change_on(client, template, values)


async def change_on(client: BaseDBAsyncClient, template: str, values: Sequence[object] = ()) -> int:
    """:func:`change` on a given SQLite connection in a transaction (the search indexer's)."""
    changed, _ = await client.execute_query(_statement(template, len(values), client), list(values))
    return int(changed)


async def change_returning(template: str, values: Sequence[object] = ()) -> list[Row]:
    """Run an INSERT, UPDATE or DELETE with a RETURNING clause; the rows it returns.

    (Tortoise's PostgreSQL client drops the rows of a write run as a query.)
    """
    client = _writer()
    rows: list[Row] = list(
        await client.execute_query_dict(_statement(template, len(values), client), list(values))
    )
    return rows


async def script(text: str) -> None:
    """Run statements that take no parameters and return no rows: session settings (``SET
    LOCAL``) and upkeep (``ANALYZE``). A write among them raises outside a transaction."""
    await connections.get("default").execute_script(text)


@functools.lru_cache(maxsize=512)
def _insert_statement(table: str, columns: tuple[str, ...], rows: int, postgres: bool) -> str:
    names = ", ".join(f'"{name}"' for name in columns)
    width = len(columns)
    if postgres:
        groups = ", ".join(
            "(" + ", ".join(f"${row * width + column + 1}" for column in range(width)) + ")"
            for row in range(rows)
        )
    else:
        groups = ", ".join("(" + ", ".join("?" * width) + ")" for _ in range(rows))
    return f'INSERT INTO "{table}" ({names}) VALUES {groups}'


async def reserve_ids(table: str, count: int) -> list[int]:
    """Take ``count`` new ids of ``table`` (an ``id`` that is SERIAL on PostgreSQL and
    AUTOINCREMENT on SQLite) inside a transaction, so that its rows go in one multi-row insert
    with their ids known, where inserting them one at a time to learn each id took a statement
    a row.

    PostgreSQL draws them from the id sequence. SQLite has no sequence to draw from, but every
    transaction holds the database's write lock (the writers' queue, app.db), so the ids after
    ``sqlite_sequence``'s are the transaction's own: insert them before reserving again, and
    the insert moves the sequence on (AUTOINCREMENT: a deleted row's id is never reused)."""
    _writer()  # inside a transaction only: outside one, two writers could take the same ids
    if postgres():
        rows = await select(
            f"SELECT nextval(pg_get_serial_sequence('{table}', 'id')) AS id FROM generate_series(1, {{}})",
            [count],
        )
        return sorted(int(row["id"]) for row in rows)
    row = await select_one("SELECT seq FROM sqlite_sequence WHERE name = {}", [table])
    last = int(row["seq"]) if row else 0
    return list(range(last + 1, last + 1 + count))


async def insert_rows(table: str, columns: tuple[str, ...], rows: Sequence[Sequence[object]]) -> None:
    """Insert ``rows`` (values in the order of ``columns``) with multi-row statements.

    Up to ROWS_PER_STATEMENT rows a statement (fewer for wide rows); full statements go
    together through the driver's executemany.
    """
    if not rows:
        return
    client = _writer()
    is_postgres = client.capabilities.dialect == "postgres"
    step = max(1, min(ROWS_PER_STATEMENT, MAX_VARIABLES // len(columns)))
    full = len(rows) // step * step
    if full > step:
        values = [
            [value for row in rows[start : start + step] for value in row] for start in range(0, full, step)
        ]
        await client.execute_many(_insert_statement(table, columns, step, is_postgres), values)
    elif full:
        await client.execute_query(
            _insert_statement(table, columns, step, is_postgres),
            [value for row in rows[:full] for value in row],
        )
    if full < len(rows):
        rest = rows[full:]
        await client.execute_query(
            _insert_statement(table, columns, len(rest), is_postgres),
            [value for row in rest for value in row],
        )


def columns(alias: str, names: Iterable[str]) -> str:
    """``alias."name" AS "alias.name"`` for every column name: how rows of joined tables keep
    their columns apart."""
    return ", ".join(f'{alias}."{name}" AS "{alias}.{name}"' for name in names)


@functools.lru_cache(maxsize=128)
def column_keys(alias: str, names: tuple[str, ...]) -> dict[str, str]:
    """``{"name": "alias.name"}``: the keys under which a row read with :func:`columns` holds a
    joined table's columns, made once per alias and shared (read it, never change it). Row
    readers that take the alias look their columns up through it: a key written as an f-string
    was a new string to build and hash for every column of every row."""
    return {name: f"{alias}.{name}" for name in names}


def limit_clause(limit: int, offset: int = 0) -> str:
    """``LIMIT n`` (and ``OFFSET m`` past the first page) written into a statement rather than
    bound as parameters, for the pages of threads and the webhook workers' claim.

    PostgreSQL prices the cached generic plan of a statement whose limit is a parameter as if it
    returned a tenth of the rows, never picks it, and plans the statement again on every run:
    for the feedback list's page that took 0.3-0.4 ms of the database's CPU, as much as running
    it; for a search's scan of the newest threads the plan made for the pattern at hand read
    every sender (24 ms) where the cached one walks the window (11 ms). With the numbers in the
    text the cached plan is kept (one text per page size and offset; a first page is the common
    case). The replies list was planned again on every run for the same reason (about 2 ms of
    the database's CPU against 0.7 with the limit written in, at 820,000 replies). Statements
    whose best plan depends on their values (a trigram look-up) keep a bound limit and are
    planned each time. Only ints are written."""
    return f"LIMIT {int(limit)} OFFSET {int(offset)}" if offset else f"LIMIT {int(limit)}"


def moment(value: datetime) -> object:
    """A date-time as a parameter: SQLite keeps date-times as ISO text, as the ORM writes them
    (``2026-11-22 16:05:27.792615+00:00``), so that text comparisons order them."""
    if postgres():
        return value
    return value.astimezone(UTC).isoformat(" ")


def moment_literal(value: datetime) -> str:
    """A date-time the code computed (a day's bounds, never a value from input) written into a
    statement as a literal, where :func:`moment` would bind it.

    For a range whose best plan is the same for any bounds (an index walked in order from one
    end of it): bound, PostgreSQL prices the cached generic plan with a default selectivity and
    plans the statement for its values on every run (a page of the replies of a day: 1.4 ms of
    the database's CPU against 0.7 with its plan kept). Written in, each day is a statement text
    of its own, prepared and planned once per connection. Only a datetime's ISO form is written
    (digits and ``-:.+ T``)."""
    if not isinstance(value, datetime):
        raise TypeError("moment_literal writes datetimes only")
    if postgres():
        return f"'{value.astimezone(UTC).isoformat()}'::timestamptz"
    return f"'{moment(value)}'"


def day(value: date) -> object:
    """A date as a parameter: asyncpg takes the date, SQLite stores ISO text."""
    return value if postgres() else value.isoformat()


def read_moment(value: Any) -> datetime:
    """A date-time column as an aware datetime in UTC."""
    if value.__class__ is datetime and value.tzinfo is UTC:
        # asyncpg's timestamptz, as it comes: a page reads hundreds, and the general path below
        # (its offset computed and compared) took five times as long
        return value
    moment: datetime = datetime.fromisoformat(value) if isinstance(value, str) else value
    if moment.tzinfo is UTC:  # SQLite's text as Earful writes it (``+00:00``): the same singleton
        return moment
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment if moment.utcoffset() == UTC.utcoffset(None) else moment.astimezone(UTC)


def read_optional_moment(value: Any) -> datetime | None:
    """:func:`read_moment`, or None for NULL."""
    return None if value is None else read_moment(value)


def read_json(value: Any) -> Any:
    """A JSON column as its Python value, decoded by orjson (fifty properties a page). The APIs
    store standard JSON only (app.services.validation.decode_json refuses NaN); a value the
    standard library accepts and orjson does not (NaN written by hand or by another tool) is
    still read, by the standard library."""
    if not isinstance(value, str | bytes):
        return value
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError:
        return json.loads(value)


def write_json(value: Any) -> str:
    """A value for a JSON column, encoded as the ORM encodes it."""
    return json.dumps(value, separators=(",", ":"))
