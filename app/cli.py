"""The ``earful`` command: database, servers (web, SMTP), the outbox worker, users, tokens, plans,
and ``seed`` (bulk demo data)."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import signal
import sys
from collections.abc import Awaitable, Callable

from app.config import Settings, load_settings
from app.db import close_database, open_database, upgrade_database
from app.errors import DomainError
from app.sentiment_cli import SENTIMENT_COMMANDS, add_sentiment_commands, run_sentiment_command


def _print_json(payload: object) -> None:
    print(json.dumps(payload))


async def _with_database(settings: Settings, work: Callable[[], Awaitable[None]]) -> None:
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
        members = [await get_user_by_email(email) for email in args.member]
        organization = await create_organization(args.name, members, args.plan)
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


async def _first_admin(settings: Settings) -> None:
    from app.services.users import create_first_admin

    async def work() -> None:
        created = await create_first_admin()
        if created:
            user, password = created
            print(
                "\n  Earful created the first admin account (shown once, keep it):\n"
                f"    e-mail:   {user.email}\n    password: {password}\n"
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


def _serve(settings: Settings, args: argparse.Namespace) -> None:
    from hypercorn.config import Config
    from hypercorn.run import run

    asyncio.run(upgrade_database(settings.database_url))
    asyncio.run(_first_admin(settings))
    config = Config()
    config.application_path = "app.asgi:application"
    config.bind = [f"{args.host}:{args.port}"]
    config.workers = args.workers
    config.worker_class = "uvloop"
    config.accesslog = "-" if args.access_log else None
    config.errorlog = "-"
    print(f"Earful serves on http://{args.host}:{args.port} (public address {settings.base_url})", flush=True)
    if settings.smtp_url:
        print(f"Earful sends e-mail through {_smtp_relay(settings)}", flush=True)
    run(config)


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

    async def work() -> None:
        stop = _stop_on_signals()
        server = await start_smtp_server(settings, args.host, args.port)
        print(f"Earful receives e-mail for @{settings.intake_domain} on {args.host}:{args.port}", flush=True)
        try:
            await stop.wait()
        finally:
            server.close()
            await server.wait_closed()

    await _with_database(settings, work)


async def _worker(settings: Settings, args: argparse.Namespace) -> None:
    from app.services.mail.outbox import run_worker

    relay = _smtp_relay(settings)

    async def work() -> None:
        stop = _stop_on_signals()
        print(f"Earful sends e-mail through {relay}", flush=True)
        await run_worker(settings, stop)

    await _with_database(settings, work)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="earful", description="Earful: collect and answer user feedback.")
    commands = parser.add_subparsers(dest="command", required=True)

    db = commands.add_parser("db", help="database maintenance").add_subparsers(dest="action", required=True)
    db.add_parser("upgrade", help="apply pending migrations")

    serve = commands.add_parser("serve", help="apply migrations, then serve the web app and both APIs")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--workers", type=int, default=1)
    serve.add_argument("--access-log", action="store_true", help="log every request to stdout")

    smtp = commands.add_parser("smtp", help="receive e-mail for the intake and reply addresses (SMTP)")
    smtp.add_argument("--host", default="127.0.0.1")
    smtp.add_argument("--port", type=int, default=2525)

    commands.add_parser("worker", help="send the outbox: public replies by e-mail (EARFUL_SMTP_URL)")

    user = commands.add_parser("user", help="users").add_subparsers(dest="action", required=True)
    user_create = user.add_parser("create", help="create a user")
    user_create.add_argument("--email", required=True)
    user_create.add_argument("--name", required=True)
    user_create.add_argument("--password")

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
    org_create.add_argument("--member", action="append", default=[], metavar="EMAIL")
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
    add_sentiment_commands(commands)
    recompute = commands.add_parser(
        "sentiment-recompute", help="label existing threads again (agents' corrections are kept)"
    )
    recompute.add_argument("--application", type=int, metavar="ID", help="only this application")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; errors go to stderr with a non-zero exit status."""
    args = build_parser().parse_args(argv)
    if args.command in SENTIMENT_COMMANDS:
        return run_sentiment_command(args)
    settings = load_settings()
    handlers: dict[tuple[str, str | None], Callable[[Settings, argparse.Namespace], Awaitable[None]]] = {
        ("user", "create"): _user_create,
        ("token", "create"): _token_create,
        ("org", "create"): _org_create,
        ("plan", "set"): _plan_set,
        ("seed", None): _seed,
        ("sentiment-recompute", None): _sentiment_recompute,
        ("smtp", None): _smtp,
        ("worker", None): _worker,
    }
    try:
        if args.command == "serve":
            _serve(settings, args)
        elif args.command == "db":
            asyncio.run(upgrade_database(settings.database_url))
        else:
            if args.command in ("smtp", "worker"):
                logging.basicConfig(
                    level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s"
                )
                logging.getLogger("mail.log").setLevel(logging.WARNING)  # aiosmtpd logs every command
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
