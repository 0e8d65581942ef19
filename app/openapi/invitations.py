"""The management API's invitations to an organization (its owners')."""

from __future__ import annotations

from app.openapi.management import ORGANIZATION_ID, Operation, operation, validation
from app.openapi.responses import json_data, path_id, text
from app.openapi.schemas import list_of, ref
from app.services.invitations import INVALID_INVITATION, MAX_PENDING
from app.services.organizations import OWNERS_ONLY

INVITATION_ID = path_id("invitation_id", "The invitation's id.")
OWNERS = text(
    "The token lacks the scope, or the user is an agent of the organization, not an owner.",
    "Insufficient scope",
    OWNERS_ONLY,
)
INVALID_ORGANIZATION = text("Unknown, or the user is not a member.", "Invalid organization")
NOTE = (
    "Nobody joins an organization without accepting: the invited person opens the link in a browser, "
    "signs in with the invited address (or creates the account there, choosing a name and a "
    "password) and accepts. A link works once, for 7 days, until an owner revokes it."
)
INVITE_BODY = {
    "required": True,
    "content": {
        media: {
            "schema": {
                "type": "object",
                "required": ["email"],
                "properties": {
                    "email": {"type": "string", "description": "The address to invite."},
                    "role": {"type": "string", "enum": ["agent", "owner"], "default": "agent"},
                },
            }
        }
        for media in ("application/json", "application/x-www-form-urlencoded")
    },
}


def invitation_paths() -> dict[str, dict[str, Operation]]:
    return {
        "/organizations/{organization_id}/invitations": {
            "get": operation(
                "listInvitations",
                "The organization's pending invitations",
                "read",
                {
                    200: json_data("Pending invitations, newest first.", list_of("Invitation")),
                    403: OWNERS,
                    404: INVALID_ORGANIZATION,
                },
                (ORGANIZATION_ID,),
                description="For the organization's owners. " + NOTE,
            ),
            "post": operation(
                "createInvitation",
                "Invite an address to the organization",
                "write",
                {
                    201: json_data(
                        "The invitation with its link (shown this once).", ref("InvitationWithLink")
                    ),
                    400: validation(
                        "The email field must be a valid email address.",
                        "The selected role is invalid.",
                        "jo@example.com is a member of the organization already.",
                        f"The organization has {MAX_PENDING} pending invitations: revoke some first.",
                        "The request body must be a JSON object.",
                    ),
                    403: OWNERS,
                    404: INVALID_ORGANIZATION,
                },
                (ORGANIZATION_ID,),
                description="For the organization's owners. The link is e-mailed to the address when "
                "the deployment sends e-mail (`emailed`); either way this answer carries it, and no other "
                "does. Inviting an address that has a pending invitation replaces it: the older link "
                f"stops working. At most {MAX_PENDING} invitations are pending at once. " + NOTE,
                requestBody=INVITE_BODY,
            ),
        },
        "/organizations/{organization_id}/invitations/{invitation_id}": {
            "delete": operation(
                "revokeInvitation",
                "Revoke a pending invitation",
                "write",
                {
                    204: {"description": "Revoked: the link no longer works; no body."},
                    403: OWNERS,
                    404: text(
                        "No organization of the user, or no pending invitation of it, with these ids "
                        "(one accepted, revoked or expired is no longer pending).",
                        "Invalid organization",
                        INVALID_INVITATION,
                    ),
                },
                (ORGANIZATION_ID, INVITATION_ID),
                description="For the organization's owners.",
            )
        },
    }
