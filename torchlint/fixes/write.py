"""Reading a file for fixing and writing it back without ever leaving it half-written.

The new content goes to a temporary file in the same directory, gets the original's
permission bits, and replaces the original with one rename. The file is written only if
it is writable and still holds exactly the bytes that were fixed.
"""

from __future__ import annotations

import io
import os
import stat
import tempfile
import tokenize
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from torchlint.engine.files import read_source


class WriteRefused(Exception):
    """The fixed text was not written; the message says why in one line."""


@dataclass(frozen=True)
class Snapshot:
    """A file as it was read: the bytes fixes were computed from, and how to encode text back."""

    path: Path  # the file itself, symlinks resolved
    data: bytes
    encoding: str

    def encode(self, text: str) -> bytes:
        try:
            return text.encode(self.encoding)
        except UnicodeEncodeError as error:
            raise WriteRefused(
                f"the fixed text cannot be encoded as {self.encoding} ({error.reason}); not written"
            ) from None


def snapshot(path: Path, root: Path, notebook: bool) -> Snapshot:
    """Read `path` as every room reads sources (so never a FIFO, a device or a file outside the
    project); raises Unreadable, or SyntaxError for a Python file's unusable coding cookie."""
    data = read_source(path, root)
    real = path.resolve()
    return snapshot_of(real, data, notebook)


def snapshot_of(path: Path, data: bytes, notebook: bool) -> Snapshot:
    """Bytes read elsewhere (stdin) as a snapshot; raises SyntaxError for an unusable coding cookie."""
    if notebook:
        encoding = "utf-8-sig" if data.startswith(b"\xef\xbb\xbf") else "utf-8"
    else:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return Snapshot(path, data, encoding)


def write_atomic(original: Snapshot, data: bytes) -> None:
    """Replace the file with `data`, keeping its permission bits; refuse if it is read-only or changed."""
    path = original.path
    try:
        status = path.stat()
        if _read_only(path, status.st_mode):
            raise WriteRefused("the file is read-only; not written")
        if path.read_bytes() != original.data:
            raise WriteRefused("the file changed on disk while it was being fixed; not written")
        _replace(path, data, status)
    except OSError as error:
        raise WriteRefused(f"cannot write: {error.strerror or error}; not written") from None


def _read_only(path: Path, mode: int) -> bool:
    # Root may write anything, so the mode bits themselves decide for a file nobody may write.
    return not os.access(path, os.W_OK) or not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)


def _replace(path: Path, data: bytes, status: os.stat_result) -> None:
    handle, temporary = tempfile.mkstemp(
        prefix=f".{path.name}.", suffix=".torchlint.tmp", dir=path.parent
    )
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, stat.S_IMODE(status.st_mode))
        with suppress(OSError):  # only possible as root or as the owner; best effort
            os.chown(temporary, status.st_uid, status.st_gid)
        os.replace(temporary, path)
    except BaseException:
        with suppress(OSError):
            os.unlink(temporary)
        raise
