"""Folders and files that only Earful's own user may read.

The data dir holds the SQLite database (password hashes, token digests, every message and
reply), the uploads, the logos and the generated secret key. Folders are created 0700 and files
0600 whatever the umask of the process (the ``earful`` command also sets a umask of 077, which
covers what SQLite and libraries create). A data dir that already exists keeps its mode:
``earful serve`` warns about it instead (``exposure_warnings``), since an administrator may
have opened it on purpose.
"""

from __future__ import annotations

import os
from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600
UMASK = 0o077


def make_private_dir(path: Path) -> None:
    """Create ``path`` and its missing parents with mode 0700; existing folders are left alone."""
    if path.is_dir():
        return
    make_private_dir(path.parent)
    try:
        path.mkdir(mode=DIR_MODE)
    except FileExistsError:
        return  # another worker made it meanwhile
    os.chmod(path, DIR_MODE)  # mkdir's mode is filtered by the umask


def create_private_file(path: Path) -> None:
    """Create an empty file with mode 0600 unless it exists (SQLite then creates its -wal and
    -shm files with the database's mode)."""
    make_private_dir(path.parent)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        return
    os.close(descriptor)


def write_private_file(path: Path, content: bytes) -> None:
    """Write ``content`` to ``path`` with mode 0600, replacing what was there."""
    make_private_dir(path.parent)
    temporary = path.with_name(f".{path.name}.part")
    temporary.unlink(missing_ok=True)
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(content)
    os.replace(temporary, path)


def _open_to_others(path: Path) -> int | None:
    """The permission bits of ``path`` when its group or other users have any, else None."""
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        return None
    return mode if mode & 0o077 else None


def exposure_warnings(data_dir: Path, database_file: Path | None) -> list[str]:
    """What to tell the administrator when the data dir or the SQLite database is open to other
    local users, with the command that fixes it."""
    found = []
    checks = [("the data dir", data_dir, DIR_MODE)]
    if database_file is not None:
        checks.append(("the database", database_file, FILE_MODE))
    for what, path, private in checks:
        mode = _open_to_others(path)
        if mode is not None:
            found.append(
                f"{what} {path} is open to other users (mode {mode:o}); it holds password hashes, "
                f"keys and every message. Make it private: chmod {private:o} {path}"
            )
    return found
