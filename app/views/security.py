"""Sessions of agents, CSRF protection and security headers of the web app.

An agent's session is two cookies. quart-auth's ``QUART_AUTH`` names the agent as
``"<user id>:<session version>"``; the version is checked against the database on every request,
so signing out (anywhere) or changing the password ends every session at once. Quart's signed
``session`` cookie holds the CSRF secret and the session's times: when it was signed in
(``since``), its last activity (``seen``, rewritten at most once a minute, so that requests do
not all set a cookie) and whether the agent asked to be remembered. It also names the agent it
belongs to, so a fresh session cookie cannot revive another, idle sign-in cookie.

How long a session lasts:

- every session ends 14 days after sign-in (:data:`SESSION_LIFETIME`);
- a session without "Keep me signed in" also ends after ``EARFUL_SESSION_IDLE_MINUTES`` without a
  request (12 hours by default), and with the browser;
- "Keep me signed in for 14 days" means what it says: the idle limit does not apply, both cookies
  persist for the 14 days. This is how mature products treat "remember me" (Devise's
  ``timeoutable`` skips remembered sessions, GitLab's and Atlassian's "Remember me" outlive their
  session timeouts); an agent on a shared computer leaves the box unticked.

Signing in starts a new Quart session: nothing of the anonymous one (its CSRF secret) is kept,
so a session planted before sign-in is worth nothing after it.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from datetime import timedelta
from functools import wraps
from typing import Any
from urllib.parse import urlsplit

from itsdangerous import URLSafeTimedSerializer
from quart import Quart, Response, current_app, g, redirect, request, session, url_for
from quart.sessions import SecureCookieSessionInterface
from quart_auth import AuthUser as QuartAuthUser
from quart_auth import QuartAuth, current_user, login_user, logout_user
from wtforms import Form
from wtforms.csrf.session import SessionCSRF

from app.repositories.accounts import UserRow
from app.services.users import user_in_session
from app.views.rendering import is_htmx

SESSION_LIFETIME = timedelta(days=14)
ACTIVITY_RESOLUTION = 60  # seconds: the last activity is rewritten at most this often
# Keys of Quart's session.
SESSION_AGENT = "agent"
SESSION_SINCE = "since"
SESSION_SEEN = "seen"
SESSION_REMEMBER = "remember"
CSRF_SECRET = "csrf"  # where WTForms' SessionCSRF keeps the session's secret

UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
CSRF_HEADER = "X-CSRF-Token"
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)

# Browsers that once saw a page over https keep to https for a year (subdomains too).
STRICT_TRANSPORT_SECURITY = "max-age=31536000; includeSubDomains"


class SessionAuth(QuartAuth):
    """quart-auth as the web app uses it, with its template context made a coroutine.

    quart-auth offers ``current_user`` to templates through a plain function, and Quart runs
    a plain context processor in its thread pool: every page paid a hand-off to a thread and
    back, and the GIL with it, to read a cookie. The pages read the agent from their own
    context (``agent``, app.views); ``current_user`` stays there as quart-auth defines it."""

    async def _template_context(self) -> dict[str, QuartAuthUser]:  # type: ignore[override]
        return {"current_user": self.load_user()}


class SessionCookies(SecureCookieSessionInterface):
    """Quart's signed session cookie, its signing serializer made once per set of keys.

    Quart opens the session of every request, and made a new itsdangerous serializer (its keys,
    salt and signer settings) each time, before even looking for the cookie: every widget
    submit and API call paid for it, though none sends the cookie. The serializer holds nothing
    between calls but its settings, so one made for the app's current keys serves every request
    until the secret key or its fallbacks change."""

    def __init__(self) -> None:
        self._made: tuple[tuple[object, ...], URLSafeTimedSerializer | None] | None = None

    def get_signing_serializer(self, app: Quart) -> URLSafeTimedSerializer | None:
        keys = (app.secret_key, *(app.config["SECRET_KEY_FALLBACKS"] or ()))
        if self._made is None or self._made[0] != keys:
            self._made = (keys, super().get_signing_serializer(app))
        return self._made[1]


def harden(response: Response, secure: bool) -> Response:
    """The headers of every page: its content policy, no framing, no sniffing, no caching of
    HTML (it carries a tenant's data), and HSTS when served over https."""
    response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("Referrer-Policy", "same-origin")
    response.headers.setdefault("X-Frame-Options", "DENY")
    if secure:
        response.headers.setdefault("Strict-Transport-Security", STRICT_TRANSPORT_SECURITY)
    if response.mimetype == "text/html":
        response.headers.setdefault("Cache-Control", "no-store")
    return response


class RequestCSRF(SessionCSRF):
    """WTForms' session CSRF, its token made once per request.

    The token has no time limit, so it is the same for every form of a page; a page asks for it
    once per form (the thread page a dozen times), and making it each time (an HMAC, behind a
    WTForms field) cost a tenth of the thread page's CPU. It is made again when the session's
    CSRF secret changed since (signing in starts a new session)."""

    def generate_csrf_token(self, csrf_token_field: Any) -> str:
        token = _token_made_in_this_request()
        if token is None:
            token = str(super().generate_csrf_token(csrf_token_field))
            g.csrf_token = (session.get(CSRF_SECRET), token)
        return token


def _token_made_in_this_request() -> str | None:
    """The token :class:`RequestCSRF` made for this request's session, if any."""
    made: tuple[object, str] | None = g.get("csrf_token")
    return made[1] if made is not None and made[0] == session.get(CSRF_SECRET) else None


class CSRFForm(Form):
    """Base of every form of the web app: it carries and checks the session's CSRF token."""

    class Meta:
        csrf = True
        csrf_class = RequestCSRF
        csrf_time_limit = None  # inbox pages stay open all day

        @property
        def csrf_secret(self) -> bytes:
            return str(current_app.config["EARFUL"].secret_key).encode()

        @property
        def csrf_context(self) -> Any:
            return session


def csrf_token() -> str:
    """The CSRF token of the current session, for forms and htmx headers (see
    :class:`RequestCSRF`: made once per request).

    Made without a form: SessionCSRF reads only its form's meta (the secret, the session and
    the time limit), and building a whole CSRFForm for it (its fields bound, its data processed)
    was a seventh of the inbox page's rendering. A form checks the token as it checks its own."""
    token = _token_made_in_this_request()
    if token is None:
        maker = RequestCSRF()
        maker.form_meta = CSRFForm.Meta()  # type: ignore[assignment]  # what SessionCSRF reads of a form's meta
        token = maker.generate_csrf_token(None)
    return token


async def check_csrf() -> bool:
    """Tell whether an unsafe request carries a valid CSRF token (header or form field)."""
    token = request.headers.get(CSRF_HEADER) or (await request.form).get("csrf_token", "")
    if not token:
        return False
    checker = CSRFForm()
    checker.csrf_token.data = token  # type: ignore[attr-defined]  # added by Meta.csrf
    return checker.validate()


def clock() -> float:
    """The time sessions are measured by (the tests move it forward)."""
    return time.time()


def _auth_id(user: UserRow) -> str:
    return f"{user.id}:{user.session_version}"


def sign_in_session(user: UserRow, remember: bool) -> None:
    """Start an agent session in a new Quart session, bound to the user's current session version."""
    session.clear()
    now = int(clock())
    session.update(
        {SESSION_AGENT: _auth_id(user), SESSION_SINCE: now, SESSION_SEEN: now, SESSION_REMEMBER: remember}
    )
    session.permanent = remember  # a remembered session outlives the browser, like its auth cookie
    csrf_token()  # its own CSRF secret now, so that the next page does not rewrite the cookie
    login_user(QuartAuthUser(_auth_id(user)), remember=remember)


def renew_session(user: UserRow) -> None:
    """Keep the current session signed in after the user's session version changed (a password
    change ends the other sessions); its CSRF secret, start and "remember" stay as they were."""
    session[SESSION_AGENT] = _auth_id(user)
    login_user(QuartAuthUser(_auth_id(user)), remember=bool(session.get(SESSION_REMEMBER)))
    g.agent = user


def end_session() -> None:
    """Forget the session in this browser: both cookies are deleted."""
    session.clear()
    logout_user()


def _session_is_current(auth_id: str, now: float) -> bool:
    """Tell whether the Quart session belongs to this sign-in and is neither too old nor idle."""
    since, seen = session.get(SESSION_SINCE), session.get(SESSION_SEEN)
    if session.get(SESSION_AGENT) != auth_id or not isinstance(since, int) or not isinstance(seen, int):
        return False
    if now - since > SESSION_LIFETIME.total_seconds():
        return False
    idle_limit = current_app.config["EARFUL"].session_idle_minutes * 60
    return bool(session.get(SESSION_REMEMBER)) or now - seen <= idle_limit


async def load_agent() -> UserRow | None:
    """The signed-in agent, if the session is still valid (it dies with a sign-out anywhere, after
    the idle limit, and 14 days after sign-in)."""
    if "agent" in g:
        known: UserRow | None = g.agent
        return known
    g.agent = None
    auth_id = current_user.auth_id
    if auth_id is None:
        return None
    now = clock()
    user_id, _, version = auth_id.partition(":")
    if not (user_id.isdigit() and version.isdigit() and _session_is_current(auth_id, now)):
        end_session()
        return None
    application_id = (request.view_args or {}).get("application_id")  # an int: the <id:> converter
    found = await user_in_session(
        int(user_id), int(version), application_id if isinstance(application_id, int) else None
    )
    if found is None:
        end_session()
        return None
    if now - session[SESSION_SEEN] >= ACTIVITY_RESOLUTION:
        session[SESSION_SEEN] = int(now)
    g.agent = found
    return found


Handler = Callable[..., Awaitable[Any]]


def _sign_in_url(come_back_to: str) -> str:
    if come_back_to:
        return url_for("views.auth.sign_in", next=come_back_to)
    return url_for("views.auth.sign_in")


def agent_required(handler: Handler) -> Handler:
    """Let only signed-in agents in; others go to the sign-in page and come back after."""

    @wraps(handler)
    async def guarded(*args: Any, **kwargs: Any) -> Any:
        if await load_agent() is not None:
            return await handler(*args, **kwargs)
        if is_htmx():
            # htmx would swap the sign-in page into a fragment: have it load the whole page,
            # and come back to the page that was open (the sign-in form checks the address).
            page = urlsplit(request.headers.get("HX-Current-URL", ""))
            target = page.path + (f"?{page.query}" if page.query else "")
            return Response(status=204, headers={"HX-Redirect": _sign_in_url(target)})
        return redirect(_sign_in_url(request.full_path if request.method == "GET" else ""))

    return guarded


def current_agent() -> UserRow:
    """The agent of a request that passed :func:`agent_required`."""
    agent: UserRow = g.agent
    return agent
