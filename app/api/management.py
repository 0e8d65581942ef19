"""The management API: users, organizations, applications and tags (bearer token, JSON)."""

from __future__ import annotations

from quart import Blueprint, Response, request

from app.api.auth import current_user, require_scope
from app.api.common import NOT_A_JSON_OBJECT, form_to_dict, json_response, parse_id, read_body, settings
from app.errors import ValidationError
from app.representations import application_json, organization_json, tag_json, user_json
from app.services import applications as applications_service
from app.services import deletion
from app.services import organizations as organizations_service
from app.services import tags as tags_service
from app.services.files import IncomingFile
from app.services.storage import storage_for

blueprint = Blueprint("management", __name__)


def data(payload: object, **extra: object) -> Response:
    """The management API's envelope."""
    return json_response({"data": payload, **extra})


@blueprint.get("/users/me")
@require_scope("read")
async def show_me() -> Response:
    return data(user_json(current_user()))


@blueprint.get("/organizations")
@require_scope("read")
async def list_organizations() -> Response:
    memberships = await organizations_service.list_memberships(current_user())
    return data([organization_json(m.organization, m.role) for m in memberships])


@blueprint.get("/organizations/<organization_id>")
@require_scope("read")
async def show_organization(organization_id: str) -> Response:
    membership = await organizations_service.get_membership(
        current_user(), parse_id(organization_id, "Invalid organization")
    )
    return data(organization_json(membership.organization, membership.role))


@blueprint.get("/applications")
@require_scope("read")
async def list_applications() -> Response:
    found = await applications_service.list_applications(current_user())
    config = settings()
    return data([application_json(a, config) for a in found])


async def _application_input() -> tuple[dict[str, object], IncomingFile | None]:
    """Fields and logo of a create or update request: multipart, urlencoded or JSON."""
    if request.mimetype == "multipart/form-data":
        fields = form_to_dict(await request.form)
        files = await request.files
        upload = files.get("logo")
        if upload is not None and upload.filename:
            return fields, IncomingFile(upload.filename, upload.read())
        return fields, None
    if request.mimetype == "application/json":
        body = await read_body(NOT_A_JSON_OBJECT)
        if "logo" in body:
            raise ValidationError("The logo field must be a file; send the request as multipart/form-data.")
        return body, None
    return await read_body("The request body must be a form."), None


@blueprint.post("/applications")
@require_scope("write")
async def create_application() -> Response:
    fields, logo = await _application_input()
    application = await applications_service.create_application(
        current_user(), fields, logo, storage_for(settings())
    )
    return data(application_json(application, settings()))


@blueprint.get("/applications/<application_id>")
@require_scope("read")
async def show_application(application_id: str) -> Response:
    application = await applications_service.get_application(
        current_user(), parse_id(application_id, "Invalid application")
    )
    return data(application_json(application, settings()))


@blueprint.route("/applications/<application_id>", methods=["POST", "PUT"])
@require_scope("write")
async def update_application(application_id: str) -> Response:
    user = current_user()
    application = await applications_service.get_application(
        user, parse_id(application_id, "Invalid application")
    )
    fields, logo = await _application_input()
    application = await applications_service.update_application(
        user, application, fields, logo, storage_for(settings())
    )
    return data(application_json(application, settings()))


@blueprint.delete("/applications/<application_id>")
@require_scope("write")
async def delete_application(application_id: str) -> Response:
    """Delete an application with everything under it (its administrators only); the DELETE is
    the confirmation, the web app's typed name is not asked for."""
    user = current_user()
    application = await applications_service.get_application(
        user, parse_id(application_id, "Invalid application")
    )
    await deletion.delete_application(user, application, storage_for(settings()))
    return Response(status=204)


@blueprint.get("/applications/<application_id>/tags")
@require_scope("read")
async def list_tags(application_id: str) -> Response:
    application = await applications_service.get_application(
        current_user(), parse_id(application_id, "Invalid application")
    )
    return data([tag_json(tag) for tag in await tags_service.list_tags(application.id)])


@blueprint.delete("/applications/<application_id>/tags/<tag_id>")
@require_scope("write")
async def delete_tag(application_id: str, tag_id: str) -> Response:
    """Delete a tag (its administrators only): its threads lose it, nothing else changes."""
    user = current_user()
    application = await applications_service.get_application(
        user, parse_id(application_id, "Invalid application")
    )
    await deletion.delete_tag(user, application, parse_id(tag_id, "Invalid tag"))
    return Response(status=204)
