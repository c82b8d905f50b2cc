"""Atomic file writing, the one implementation every writer of regn uses.

A write goes to a temporary file beside the destination, named
``.NAME.<random>.tmp``, which is flushed to disk and then renamed onto the
destination: a reader (or a crash) sees the old file or the complete new one,
never a partial file. On any error the temporary file is removed. A writer
killed outright (SIGKILL) cannot remove it, so every successful write to a
destination also removes that destination's temporary files older than
:data:`STALE_TEMP_SECONDS` (a live writer's file is younger).

Errors are the operating system's (``OSError``; ``FileExistsError`` when
``overwrite=False`` meets an existing file): each caller turns them into its
own one-line :mod:`regn.errors` message.
"""

from __future__ import annotations

import contextlib
import glob
import os
import tempfile
import time

#: A temporary file older than this is taken to be left by a killed writer.
STALE_TEMP_SECONDS = 600


def atomic_write(path, payload: bytes, *, overwrite: bool = True) -> None:
    """Write ``payload`` to ``path`` atomically. With ``overwrite=False`` an
    existing file is refused (``FileExistsError``), even one that appears
    while the payload is being written."""
    with _temporary(path, overwrite) as (fd, _):
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())


@contextlib.contextmanager
def temp_path(path, *, overwrite: bool = True):
    """For writers that need a file name (meshio): yield the temporary
    file's name; when the block ends without error the file is synced and
    renamed onto ``path``, on any error removed."""
    with _temporary(path, overwrite) as (fd, tmp):
        os.close(fd)
        yield tmp
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())


@contextlib.contextmanager
def _temporary(path, overwrite):
    """(fd, name) of a new temporary file beside ``path``, with the mode a
    plain ``open()`` would give; moved onto ``path`` when the block succeeds,
    removed when it fails."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    name = os.path.basename(path)
    if not overwrite and os.path.exists(path):
        raise FileExistsError(f"{path} exists (refusing to overwrite it)")
    fd, tmp = tempfile.mkstemp(prefix="." + name + ".", suffix=".tmp", dir=directory)
    try:
        os.chmod(tmp, 0o666 & ~_umask())          # mkstemp makes the file 0600
        yield fd, tmp
        if overwrite:
            os.replace(tmp, path)
        else:
            # link() fails if the name appeared meanwhile; rename would clobber it
            os.link(tmp, path)
            os.unlink(tmp)
        _sweep_stale_temps(directory, name)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _sweep_stale_temps(directory: str, name: str) -> None:
    """Remove the temporary files of this destination that a killed writer
    left, once they are old enough that no live writer can still own them."""
    now = time.time()
    pattern = os.path.join(glob.escape(directory), "." + glob.escape(name) + ".*.tmp")
    for stale in glob.glob(pattern):
        with contextlib.suppress(OSError):
            if now - os.path.getmtime(stale) > STALE_TEMP_SECONDS:
                os.unlink(stale)
