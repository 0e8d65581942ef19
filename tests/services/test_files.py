"""Files written under the data dir (app/services/files.py): uploads and logos."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from app.services.files import write_file


@pytest.fixture
def open_umask() -> Iterator[None]:
    """The usual umask (022), under which a plain write makes a file every local user may read."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def test_write_file_creates_a_file_only_its_user_can_read(tmp_path, open_umask):
    name = write_file(tmp_path, b"a message", ".txt")

    assert (tmp_path / name).read_bytes() == b"a message"
    assert (tmp_path / name).stat().st_mode & 0o777 == 0o600


def test_write_file_creates_missing_folders_only_its_user_can_enter(tmp_path, open_umask):
    folder = tmp_path / "data" / "uploads" / "7"

    write_file(folder, b"a message")

    for path in (tmp_path / "data", tmp_path / "data" / "uploads", folder):
        assert path.stat().st_mode & 0o777 == 0o700, path
