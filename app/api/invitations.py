"""The management API's invitations to an organization: listed, made and revoked by its owners.

Accepting is not an API operation: the invited person opens the link in a browser (the web app's
``/app/invitations/<token>``), signs in with the invited address or creates the account there.
"""

from __future__ import annotations

from quart import Blueprint, Response

from app.api.auth import current_user, require_scope
from app.api.common import NOT_A_JSON_OBJECT, json_response, parse_id, read_body
from app.repositories.organizations import OrganizationRow
from app.representations import invitation_json
from app.services import invitations
from app.services import organizations as organizations_service
from app.services.invitations import INVALID_INVITATION

blueprint = Blueprint("invitations", __name__)


async def _organization(organization_id: str) -> OrganizationRow:
    return await organizations_service.get_organization(
        current_user(), parse_id(organization_id, "Invalid organization")
    )


@blueprint.get("/organizations/<organization_id>/invitations")
@require_scope("read")
async def list_invitations(organization_id: str) -> Response:
    """The organization's pending invitations, newest first (owners only)."""
    organization = await _organization(organization_id)
    pending = await invitations.list_pending(current_user(), organization)
    return json_response({"data": [invitation_json(invitation) for invitation in pending]})


@blueprint.post("/organizations/<organization_id>/invitations")
@require_scope("write")
async def create_invitation(organization_id: str) -> Response:
    """Invite an address with a role (owners only): 201 with the link, which no other answer
    shows; it is also e-mailed to the address when e-mail goes out (``emailed``)."""
    organization = await _organization(organization_id)
    body = await read_body(NOT_A_JSON_OBJECT)
    made = await invitations.invite(
        current_user(), organization, body.get("email"), body.get("role", "agent")
    )
    return json_response(
        {"data": {**invitation_json(made.invitation), "url": made.url, "emailed": made.emailed}}, 201
    )


@blueprint.delete("/organizations/<organization_id>/invitations/<invitation_id>")
@require_scope("write")
async def revoke_invitation(organization_id: str, invitation_id: str) -> Response:
    """Revoke a pending invitation (owners only): its link stops working. 204."""
    organization = await _organization(organization_id)
    await invitations.revoke(current_user(), organization, parse_id(invitation_id, INVALID_INVITATION))
    return Response(status=204)
