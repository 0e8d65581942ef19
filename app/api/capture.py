"""The capture API used by feedback widgets: open, upload, submit (application key, POST only).

Every answer is plain text or JSON in the submitted ``language``; every answer, errors included,
carries ``Access-Control-Allow-Origin: *`` because widgets post from customers' sites and never
rely on cookies.
"""

from __future__ import annotations

from quart import Blueprint, Response, current_app, request
from werkzeug.exceptions import RequestEntityTooLarge

from app.api.common import json_response, parse_id, read_body, settings, text_response
from app.errors import DomainError, TooManyRequests, ValidationError
from app.i18n import N_, normalize_language, translate
from app.metrics import capture_submitted
from app.proxies import client_address
from app.repositories.applications import ApplicationRow
from app.services.applications import authenticate_capture
from app.services.attachments import store_uploads
from app.services.blocklist import address_blocked, sender_blocked
from app.services.capture_limits import CaptureLimiter
from app.services.feedback import create_thread
from app.services.files import IncomingFile
from app.services.stats import record_form_open
from app.services.storage import storage_for
from app.services.submissions import looks_automated, parse_submission

blueprint = Blueprint("capture", __name__)

CAPTURE_PATHS = ("open", "upload", "submit")


@blueprint.after_request
async def allow_any_origin(response: Response) -> Response:
    response.headers["Access-Control-Allow-Origin"] = "*"
    if request.method == "OPTIONS":
        response.status_code = 204
        response.headers["Access-Control-Allow-Methods"] = "POST, OPTIONS"
        response.headers["Access-Control-Allow-Headers"] = (
            request.headers.get("Access-Control-Request-Headers") or "Content-Type"
        )
        response.headers["Access-Control-Max-Age"] = "86400"
    return response


@blueprint.errorhandler(DomainError)
async def translated_error(error: DomainError) -> Response:
    return _error_response(error, _language())


def _error_response(error: DomainError, language: str) -> Response:
    """A domain error in the answer's language; a rate limit says when to try again."""
    headers = {"Retry-After": str(error.retry_after)} if isinstance(error, TooManyRequests) else None
    return text_response(translate(error.message, language, **error.params), error.status, headers)


@blueprint.errorhandler(RequestEntityTooLarge)
async def request_too_large(_: RequestEntityTooLarge) -> Response:
    return text_response(translate(N_("Request too large"), _language()), 413)


def _language(body: dict[str, object] | None = None) -> str:
    """The language of the answer: the body's ``language``, else the query's, else English."""
    if body and body.get("language"):
        return normalize_language(body.get("language"))
    return normalize_language(request.args.get("language"))


async def _application(application_id: str, missing: str, action: str) -> ApplicationRow:
    """The application of the request, checked in order: exists, key, switch, origin, then the
    rate limit of ``action`` for the caller's address (before any body is read)."""
    application = await authenticate_capture(
        parse_id(application_id, missing), request.args.get("key"), missing, request.headers.get("Origin")
    )
    limiter: CaptureLimiter = current_app.extensions["earful_capture_limiter"]
    await limiter.check(application, action, client_address())
    return application


@blueprint.post("/applications/<application_id>/open")
async def open_form(application_id: str) -> Response:
    application = await _application(application_id, N_("Invalid application"), "open")
    if not await address_blocked(application.id, client_address()):
        await record_form_open(application)
    return text_response(translate(N_("OK"), _language()), 201)


@blueprint.post("/applications/<application_id>/upload")
async def upload(application_id: str) -> Response:
    application = await _application(application_id, N_("Invalid application"), "upload")
    if not application.uploads_enabled:
        raise ValidationError(N_("Uploads not enabled"))
    files: list[IncomingFile] = []
    if request.mimetype == "multipart/form-data":
        for _, item in (await request.files).items(multi=True):
            try:
                content = item.read()
            finally:
                item.close()
            if item.filename or content:
                files.append(IncomingFile(item.filename or "file", content))
    config = settings()
    ids = await store_uploads(storage_for(config), application, files, config.max_upload_bytes, config.quotas)
    return json_response(ids, 201)


@blueprint.post("/applications/<application_id>/submit")
async def submit(application_id: str) -> Response:
    body_error: ValidationError | None = None
    try:
        body = await read_body(N_("Invalid request body"), explain=False)
    except ValidationError as error:
        body, body_error = {}, error
    language = _language(body)
    try:
        application = await _application(application_id, N_("Application not found"), "submit")
        if body_error is not None:
            raise body_error
        quotas = settings().quotas
        address = client_address()
        submission = parse_submission(body, address, request.headers.get("User-Agent", ""), quotas)
        # A bot or a blocked sender gets the answer anyone gets, so it has no reason to try again.
        # A server key's ``ip`` (its user's address) is matched as well as the caller's own.
        if not looks_automated(submission, settings().min_fill_seconds) and not await sender_blocked(
            application.id, submission.email, address, submission.ip_address
        ):
            await create_thread(application, submission, quotas)
            capture_submitted("stored")
        else:
            capture_submitted("discarded")
    except DomainError as error:
        capture_submitted("refused")
        return _error_response(error, language)
    return text_response(translate(N_("Feedback sent!"), language), 201)
