"""Files received from clients (app/services/files.py): the names they are stored under (how
they are written, on disk or in a bucket, is tests/services/test_storage.py's)."""

from __future__ import annotations

import re

from app.services.files import new_file_name


def test_a_stored_name_is_128_random_bits_with_its_suffix():
    names = {new_file_name(".png") for _ in range(100)}

    assert len(names) == 100
    assert all(re.fullmatch(r"[0-9a-f]{32}\.png", name) for name in names)
