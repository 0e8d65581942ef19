"""The labels (name and colour) of tags, kept by each worker: what a thread's chips and its
representation show of its tags, so that a page or a list of threads reads only their tag ids."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from app.repositories import tags
from app.repositories.tags import TagLabel
from app.repositories.threads import ThreadRow


class TagLabels:
    """The labels of the tags this worker has shown, by tag id.

    A tag's name and colour never change once it exists, and its id is never given to another
    tag (PostgreSQL's sequences, SQLite's ``AUTOINCREMENT``), so an entry is never stale and
    nothing needs to tell other workers or hosts about a change. A page of the inbox carries
    its threads' tag ids (:class:`app.repositories.inbox.ThreadLine`), the other reads of
    threads read their links' (app.repositories.thread_parts), and only ids seen for the first
    time are read. Past ``size`` entries the whole map starts again: an application
    has at most its quota of tags, and a worker serves few applications.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        # By application and tag: a page gets labels only of its own application's tags.
        self._labels: dict[tuple[int, int], TagLabel] = {}

    async def of(self, application_id: int, tag_ids: set[int]) -> dict[int, TagLabel]:
        """The labels of these tags of the application (a tag it does not have is left out)."""
        known = self._labels
        missing = [tag_id for tag_id in tag_ids if (application_id, tag_id) not in known]
        if missing:
            found = await tags.labels_of_tags(application_id, sorted(missing))
            if len(known) + len(found) > self.size:
                known.clear()
            known.update(((application_id, label.id), label) for label in found)
        return {tag_id: label for tag_id in tag_ids if (label := known.get((application_id, tag_id)))}

    def clear(self) -> None:
        """Forget every label (a test's database starts its ids again)."""
        self._labels.clear()


tag_labels = TagLabels(size=100_000)


async def labels_of(
    application_id: int, tag_ids_by_thread: Mapping[int, Sequence[int]]
) -> dict[int, list[TagLabel]]:
    """Each thread's tag labels by name, from its tag ids."""
    wanted = {tag_id for ids in tag_ids_by_thread.values() for tag_id in ids}
    labels = await tag_labels.of(application_id, wanted)
    return {
        feedback_id: sorted((labels[tag_id] for tag_id in ids if tag_id in labels), key=tags.by_name)
        for feedback_id, ids in tag_ids_by_thread.items()
    }


async def labels_of_threads(
    threads: Sequence[ThreadRow], tag_ids_by_thread: Mapping[int, Sequence[int]]
) -> dict[int, list[TagLabel]]:
    """:func:`labels_of` for threads of one application or several (the threads one batch of
    captures wrote): each thread's labels are its own application's."""
    by_application: dict[int, dict[int, Sequence[int]]] = {}
    for thread in threads:
        by_application.setdefault(thread.application_id, {})[thread.id] = tag_ids_by_thread.get(thread.id, ())
    labels: dict[int, list[TagLabel]] = {}
    for application_id, ids in by_application.items():
        labels.update(await labels_of(application_id, ids))
    return labels
