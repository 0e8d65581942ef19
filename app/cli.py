"""The ``earful`` command: database, servers (web, SMTP), the outbox worker, users, tokens, plans,
and ``seed`` (bulk demo data)."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from app.config import Settings, load_settings
from app.db import close_database, open_database, sqlite_file, upgrade_database
from app.errors import DomainError
from app.export_cli import add_export_command, export_threads
from app.private_files import UMASK, exposure_warnings, write_private_file
from app.sentiment_cli import SENTIMENT_COMMANDS, add_sentiment_commands, run_sentiment_command


def _print_json(payload: object) -> None:
    print(json.dumps(payload))


async def _with_database(settings: Settings, work: Callable[[], Awaitable[None]]) -> None:
    """Run ``work`` with the database open, as the deployment: what a command writes carries the
    app's links (webhook events, e-mails), which creating the app sets up."""
    from app import create_app

    create_app(settings, manage_db=False)
    await open_database(settings.database_url)
    try:
        await work()
    finally:
        await close_database()


async def _user_create(settings: Settings, args: argparse.Namespace) -> None:
    from app.services.users import create_user

    async def work() -> None:
        user, password = await create_user(args.email, args.name, args.password)
        _print_json({"id": user.id, "email": user.email, "name": user.name})
        if args.password is None:
            print(f"Generated password: {password}", file=sys.stderr)

    await _with_database(settings, work)


def _read_new_password() -> str:
    """The new password of ``user set-password`` without ``--password``: typed twice at a
    terminal (not echoed), else the first line of stdin (``printf '%s\n' "$P" | earful ...``),
    so that it shows neither in the process list nor in the shell's history."""
    if not sys.stdin.isatty():
        return sys.stdin.readline().removesuffix("\n").removesuffix("\r")
    try:
        password = getpass.getpass("New password: ")
        again = getpass.getpass("New password, again: ")
    except EOFError:
        raise DomainError("No password given; nothing was changed.") from None
    if again != password:
        raise DomainError("The two passwords differ; nothing was changed.")
    return password


async def _user_set_password(settings: Settings, args: argparse.Namespace) -> None:
    from app.services.passwords import set_password
    from app.services.users import get_user_by_email

    async def work() -> None:
        user = await get_user_by_email(args.email)  # an unknown address fails before the prompt
        password = args.password if args.password is not None else _read_new_password()
        await set_password(user, password)

    await _with_database(settings, work)


async def _token_create(settings: Settings, args: argparse.Namespace) -> None:
    from app.services.tokens import create_token
    from app.services.users import get_user_by_email

    async def work() -> None:
        user = await get_user_by_email(args.email)
        _, raw = await create_token(user, args.scope, args.name or "")
        print(raw)

    await _with_database(settings, work)


async def _org_create(settings: Settings, args: argparse.Namespace) -> None:
    from app.services.organizations import create_organization
    from app.services.users import get_user_by_email

    async def work() -> None:
        owners = [await get_user_by_email(email) for email in args.owner]
        members = [await get_user_by_email(email) for email in args.member]
        organization = await create_organization(args.name, members, args.plan, owners=owners)
        _print_json({"id": organization.id, "name": organization.name})

    await _with_database(settings, work)


async def _plan_set(settings: Settings, args: argparse.Namespace) -> None:
    from app.services.plans import set_organization_plan, set_user_plan

    async def work() -> None:
        if args.org is not None:
            await set_organization_plan(args.org, args.plan)
        else:
            await set_user_plan(args.user, args.plan)

    await _with_database(settings, work)


FIRST_ADMIN_PASSWORD_FILE = "first-admin-password"


async def _first_admin(settings: Settings) -> None:
    """Create the first admin of a new installation and tell its password to whoever runs Earful.

    At a terminal the password is printed once. Otherwise stdout is a service log (journald, a
    file, a container log) that others may read and that is kept for long: the password goes to
    a file of the data dir only this user can read, and the log names that file.
    """
    from app.services.users import create_first_admin

    async def work() -> None:
        created = await create_first_admin()
        if not created:
            return
        user, password = created
        if sys.stdout.isatty():
            where = f"(shown once, keep it):\n    e-mail:   {user.email}\n    password: {password}\n"
        else:
            path = settings.data_dir / FIRST_ADMIN_PASSWORD_FILE
            write_private_file(path, f"{password}\n".encode())
            where = (
                f"for {user.email}.\n  Its password is in {path} (readable by this user only):\n"
                f"    cat {path}\n  Keep it somewhere safe, then delete that file.\n"
            )
        print(
            f"\n  Earful created the first admin account {where}"
            "  Create an API token with:\n"
            f"    .venv/bin/earful token create --email {user.email} --scope read --scope write\n",
            flush=True,
        )

    await _with_database(settings, work)


async def _seed(settings: Settings, args: argparse.Namespace) -> None:
    from app.services.seed import seed_application

    async def work() -> None:
        report = await seed_application(args.application, args.threads, args.seed)
        _print_json(report.as_dict())

    await _with_database(settings, work)


async def _sentiment_recompute(settings: Settings, args: argparse.Namespace) -> None:
    from app.services.feedback import recompute_all_sentiment

    async def work() -> None:
        applications, changed = await recompute_all_sentiment(args.application)
        _print_json({"applications": applications, "threads_changed": changed})

    await _with_database(settings, work)


async def _retention_run(settings: Settings, args: argparse.Namespace) -> None:
    from datetime import UTC, datetime

    from app.services.retention import apply_retention
    from app.services.storage import storage_for

    async def work() -> None:
        deleted = await apply_retention(storage_for(settings), datetime.now(UTC))
        _print_json(
            {
                "threads": sum(deleted.values()),
                "applications": [{"id": key, "threads": count} for key, count in sorted(deleted.items())],
            }
        )

    await _with_database(settings, work)


async def _member_erase(settings: Settings, args: argparse.Namespace) -> None:
    from app.services.erasure import erase_person
    from app.services.storage import storage_for

    async def work() -> None:
        _print_json(await erase_person(None, args.email, args.application, storage=storage_for(settings)))

    await _with_database(settings, work)


async def _member_export(settings: Settings, args: argparse.Namespace) -> None:
    from app.links import attachment_path
    from app.services.erasure import export_person

    async def work() -> None:
        # The files' addresses are the API's, built from the app's routes.
        document = await export_person(
            None,
            args.email,
            args.application,
            attachment_url=lambda attachment: settings.base_url + attachment_path(attachment),
        )
        print(json.dumps(document, ensure_ascii=False, indent=2))

    await _with_database(settings, work)


def _serve(settings: Settings, args: argparse.Namespace) -> int:
    from hypercorn.config import Config

    from app.logs import configure_logging
    from app.metrics import prepare_multiprocess_dir
    from app.supervisor import Supervisor

    log = logging.getLogger("earful.serve")
    configure_logging(settings.log_format)
    if settings.metrics_bind and settings.metrics_bind[1] == args.port:
        # The app tells the metrics listener by its port.
        raise DomainError(f"EARFUL_METRICS_BIND needs another port than --port {args.port}")
    for warning in exposure_warnings(settings.data_dir, sqlite_file(settings.database_url)):
        log.warning(warning)
    asyncio.run(upgrade_database(settings.database_url))
    asyncio.run(_first_admin(settings))
    if args.access_log is not None:  # the workers read it from their environment
        os.environ["EARFUL_ACCESS_LOG"] = "1" if args.access_log else "0"
    prepare_multiprocess_dir(settings.data_dir / "metrics")
    config = Config()
    config.application_path = "app.asgi:application"
    config.bind = [f"{args.host}:{args.port}"]
    config.workers = args.workers
    config.worker_class = "uvloop"
    config.graceful_timeout = settings.graceful_timeout
    # Earful logs each request itself (app/observation.py); Hypercorn's lines go through the
    # workers' handler (app/logs.py), passed by name to the spawned workers.
    config.accesslog = None
    config.errorlog = logging.getLogger("hypercorn.error")
    print(f"Earful serves on http://{args.host}:{args.port} (public address {settings.base_url})", flush=True)
    if settings.metrics_bind:
        host, port = settings.metrics_bind
        shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        config.bind.append(shown)
        print(f"Earful serves /metrics without a token on http://{shown}", flush=True)
    if settings.smtp_url:
        print(f"Earful sends e-mail through {_smtp_relay(settings)}", flush=True)
    return Supervisor(config, args.workers).run()


def _at_least_one(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError("must be a whole number") from None
    if number < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return number


def _stop_on_signals() -> asyncio.Event:
    """An event set by SIGINT or SIGTERM (call it inside the running loop)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    return stop


def _smtp_relay(settings: Settings) -> str:
    """Where the outbox sends, for the start-up message; a bad EARFUL_SMTP_URL fails here."""
    from app.services.mail.outbox import SmtpRelay

    if not settings.smtp_url:
        raise DomainError("EARFUL_SMTP_URL is not set: there is nowhere to send e-mail")
    try:
        relay = SmtpRelay.from_url(settings.smtp_url)
    except ValueError as error:
        raise DomainError(str(error)) from None
    return f"{relay.host}:{relay.port}"


async def _smtp(settings: Settings, args: argparse.Namespace) -> None:
    from app.mail.smtp import start_smtp_server
    from app.services.invalidation import serve_invalidations

    async def work() -> None:
        stop = _stop_on_signals()
        server = await start_smtp_server(settings, args.host, args.port)
        print(f"Earful receives e-mail for @{settings.intake_domain} on {args.host}:{args.port}", flush=True)
        # The intake matches senders against the blocklists' cache: changes arrive through Redis.
        redis_url = settings.redis_url
        subscriber = (
            asyncio.create_task(serve_invalidations(redis_url, settings.redis_key_prefix, stop))
            if redis_url
            else None
        )
        try:
            await stop.wait()
        finally:
            server.close()
            await server.wait_closed()
            if subscriber is not None:
                await subscriber

    await _with_database(settings, work)


async def _worker(settings: Settings, args: argparse.Namespace) -> None:
    from app.services.mail.outbox import run_worker
    from app.services.webhooks.delivery import run_worker as run_webhook_worker
    from app.workers import run_digests

    relay = _smtp_relay(settings) if settings.smtp_url else None

    async def work() -> None:
        stop = _stop_on_signals()
        jobs = [run_webhook_worker(settings, stop)]
        if relay is not None:
            print(f"Earful sends e-mail through {relay}", flush=True)
            jobs += [run_worker(settings, stop), run_digests(settings, stop)]
        print("Earful delivers webhook events", flush=True)
        await asyncio.gather(*jobs)

    await _with_database(settings, work)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="earful", description="Earful: collect and answer user feedback.")
    commands = parser.add_subparsers(dest="command", required=True)

    db = commands.add_parser("db", help="database maintenance").add_subparsers(dest="action", required=True)
    db.add_parser("upgrade", help="apply pending migrations")

    serve = commands.add_parser("serve", help="apply migrations, then serve the web app and both APIs")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument(
        "--workers", type=_at_least_one, default=1, help="web worker processes, kept running by earful"
    )
    serve.add_argument(
        "--access-log",
        action=argparse.BooleanOptionalAction,
        help="log a line per request to stderr (the default; EARFUL_ACCESS_LOG=0 turns it off too)",
    )

    smtp = commands.add_parser("smtp", help="receive e-mail for the intake and reply addresses (SMTP)")
    smtp.add_argument("--host", default="127.0.0.1")
    smtp.add_argument("--port", type=int, default=2525)

    commands.add_parser(
        "worker", help="deliver webhook events, and send the outbox and digests when EARFUL_SMTP_URL is set"
    )

    user = commands.add_parser("user", help="users").add_subparsers(dest="action", required=True)
    user_create = user.add_parser("create", help="create a user")
    user_create.add_argument("--email", required=True)
    user_create.add_argument("--name", required=True)
    user_create.add_argument("--password")
    user_password = user.add_parser(
        "set-password", help="set a user's password (read from a prompt or stdin without --password)"
    )
    user_password.add_argument("--email", required=True)
    user_password.add_argument("--password", help="visible in the process list: prefer the prompt or stdin")

    token = commands.add_parser("token", help="API access tokens").add_subparsers(
        dest="action", required=True
    )
    token_create = token.add_parser("create", help="create a personal access token")
    token_create.add_argument("--email", required=True)
    token_create.add_argument("--scope", action="append", required=True, choices=["read", "write"])
    token_create.add_argument("--name")

    org = commands.add_parser("org", help="organizations").add_subparsers(dest="action", required=True)
    org_create = org.add_parser("create", help="create an organization")
    org_create.add_argument("--name", required=True)
    org_create.add_argument(
        "--owner",
        action="append",
        default=[],
        metavar="EMAIL",
        help="an owner: manages the members, their roles and which applications belong",
    )
    org_create.add_argument(
        "--member",
        action="append",
        default=[],
        metavar="EMAIL",
        help="an agent: works the inbox (without --owner, the first member is the owner)",
    )
    org_create.add_argument("--plan", default="free", choices=["free", "team"])

    plan = commands.add_parser("plan", help="plans").add_subparsers(dest="action", required=True)
    plan_set = plan.add_parser("set", help="put an organization or a user on a plan")
    owner = plan_set.add_mutually_exclusive_group(required=True)
    owner.add_argument("--org", type=int, metavar="ID")
    owner.add_argument("--user", metavar="EMAIL")
    plan_set.add_argument("plan", choices=["free", "team"])

    seed = commands.add_parser(
        "seed", help="load realistic threads into an application, fast (demos, benchmarks)"
    )
    seed.add_argument("--application", type=int, required=True, metavar="ID")
    seed.add_argument("--threads", type=int, required=True, metavar="N")
    seed.add_argument("--seed", type=int, default=1, metavar="S", help="random seed (same seed, same data)")
    member = commands.add_parser(
        "member", help="privacy requests: a person who sent feedback, by e-mail, in every application"
    ).add_subparsers(dest="action", required=True)
    for action, description in (
        ("erase", "erase the person: sender, threads, answers, files, e-mails (prints the counts)"),
        ("export", "print everything held about the person as one JSON document"),
    ):
        person = member.add_parser(action, help=description)
        person.add_argument("--email", required=True)
        person.add_argument("--application", type=int, metavar="ID", help="only this application")
    add_sentiment_commands(commands)
    add_export_command(commands)
    recompute = commands.add_parser(
        "sentiment-recompute", help="label existing threads again (agents' corrections are kept)"
    )
    recompute.add_argument("--application", type=int, metavar="ID", help="only this application")
    retention = commands.add_parser("retention", help="delete threads past their application's retention")
    retention.add_subparsers(dest="action", required=True).add_parser(
        "run",
        help="delete the due threads now (the web server's workers do it every EARFUL_RETENTION_SECONDS)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; errors go to stderr with a non-zero exit status.

    Whatever it creates (the data dir, the database and SQLite's -wal and -shm files, uploads,
    logos; the workers of ``serve`` inherit the umask) only this user may read: see
    app/private_files.py.
    """
    os.umask(UMASK)
    args = build_parser().parse_args(argv)
    if args.command in SENTIMENT_COMMANDS:
        return run_sentiment_command(args)
    from app.services.storage import storage_for

    try:
        settings = load_settings()
        storage_for(settings)  # a bucket's AWS variables are checked now, not at the first upload
    except ValueError as error:
        print(f"earful: {error}", file=sys.stderr)
        return 1
    handlers: dict[
        tuple[str, str | None], Callable[[Settings, argparse.Namespace], Coroutine[Any, Any, None]]
    ] = {
        ("user", "create"): _user_create,
        ("user", "set-password"): _user_set_password,
        ("token", "create"): _token_create,
        ("org", "create"): _org_create,
        ("plan", "set"): _plan_set,
        ("seed", None): _seed,
        ("member", "erase"): _member_erase,
        ("member", "export"): _member_export,
        ("export", None): export_threads,
        ("sentiment-recompute", None): _sentiment_recompute,
        ("retention", "run"): _retention_run,
        ("smtp", None): _smtp,
        ("worker", None): _worker,
    }
    try:
        if args.command == "serve":
            return _serve(settings, args)
        elif args.command == "db":
            asyncio.run(upgrade_database(settings.database_url))
        else:
            if args.command in ("smtp", "worker"):
                from app.logs import configure_logging

                configure_logging(settings.log_format)
            asyncio.run(handlers[(args.command, getattr(args, "action", None))](settings, args))
    except DomainError as error:
        print(f"earful: {error}", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"earful: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
