"""The audit trail's statement."""

from __future__ import annotations

from datetime import UTC, datetime

from app.db import transactional
from app.models import AuditEntry
from app.repositories import audit


async def test_an_audit_entry_is_written_with_its_counts(db):
    now = datetime(2026, 11, 25, 6, 0, tzinfo=UTC)

    entry_id = await transactional(audit.insert_entry)(None, 7, "retention.run", {"threads": 3}, now)

    entry = await AuditEntry.get(id=entry_id)
    assert (entry.actor_id, entry.application_id, entry.action) == (None, 7, "retention.run")
    assert entry.counts == {"threads": 3}
    assert entry.created_at == now
