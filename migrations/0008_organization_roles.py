"""Roles in organizations: every membership gets a ``role``, ``owner`` or ``agent``.

The column has a database default, ``agent``, so that it can be added to a table that has rows
(on SQLite and PostgreSQL alike), and so that a membership written by plain SQL is an agent.

Before roles, every member could do everything. The earliest membership of each existing
organization (its lowest id: the creator, or the first member the command line named) becomes
its owner, so that every organization with members keeps someone who manages it; the others
become agents, and an owner can promote them on the organization's page.
"""

from tortoise import fields, migrations
from tortoise.migrations import operations as ops

# Plain SQL that SQLite and PostgreSQL both run as it is.
FIRST_MEMBERS_OWN = (
    "UPDATE memberships SET role = 'owner' "
    "WHERE id IN (SELECT MIN(id) FROM memberships GROUP BY organization_id)"
)


async def make_first_members_owners(apps, schema_editor) -> None:
    await schema_editor.client.execute_script(FIRST_MEMBERS_OWN)


async def forget_owners(apps, schema_editor) -> None:
    """The column goes with the reversal of the AddField."""


class Migration(migrations.Migration):
    dependencies = [("models", "0007_newest_threads_index")]

    initial = False

    operations = [
        ops.AddField(
            model_name="Membership",
            name="role",
            field=fields.CharField(default="agent", db_default="agent", max_length=16),
        ),
        ops.RunPython(make_first_members_owners, forget_owners),
    ]
