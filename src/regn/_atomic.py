"""Writing files, the one implementation every writer of regn uses.

Where the output goes decides how it is written:

* a regular file (or a name not yet taken) is written atomically: a
  temporary file beside it, named ``.NAME.<random>.tmp``, is flushed to disk
  and renamed onto it, so a reader (or a crash) sees the old file or the
  complete new one, never a partial file. On any error the temporary file is
  removed. A writer killed outright (SIGKILL) cannot remove it, so every
  successful write to a destination also removes that destination's
  temporary files older than :data:`STALE_TEMP_SECONDS`;
* a symbolic link is written through: its final target is what is replaced
  (atomically, as above), the link stays;
* a device, a FIFO, or one of the process's open descriptors
  (``/dev/stdout``, ``/dev/fd/N``, ``/proc/self/fd/N``) is a stream: it is
  opened and written directly, never replaced by a rename. A stream replaces
  nothing, so it is written even when ``overwrite=False``.

While a command runs inside :func:`protected_inputs`, every file a loader
reads is recorded (:func:`note_input`) and a write that would replace one
of them (the same file, by device and inode: through a link or a second
name too) is refused.

Errors are the operating system's (``OSError``; ``FileExistsError`` when
``overwrite=False`` meets an existing file or the destination is one of the
command's inputs): each caller turns them into its own one-line
:mod:`regn.errors` message.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import stat
import tempfile
import time

#: A temporary file older than this is taken to be left by a killed writer.
STALE_TEMP_SECONDS = 600


class IsAnInput(FileExistsError):
    """The destination is one of the running command's inputs."""


#: (st_dev, st_ino) of the files the running command has read; None when no
#: command is running (library use: nothing is tracked).
_inputs: set | None = None


@contextlib.contextmanager
def protected_inputs():
    """Within the block, no write replaces a file noted by :func:`note_input`."""
    global _inputs
    outer, _inputs = _inputs, set()
    try:
        yield
    finally:
        _inputs = outer


def note_input(path) -> None:
    """Record ``path`` as an input of the running command (a no-op outside
    :func:`protected_inputs`, and for anything but a regular file)."""
    if _inputs is None:
        return
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return
    if stat.S_ISREG(st.st_mode):
        _inputs.add((st.st_dev, st.st_ino))


def forget_input(path) -> None:
    """Allow the running command to replace input ``path`` (``rewrite --in-place``)."""
    with contextlib.suppress(OSError, ValueError):
        st = os.stat(path)
        if _inputs is not None:
            _inputs.discard((st.st_dev, st.st_ino))


def atomic_write(path, payload: bytes, *, overwrite: bool = True) -> None:
    """Write ``payload`` to ``path`` (see the module's rules). With
    ``overwrite=False`` an existing file is refused (``FileExistsError``),
    even one that appears while the payload is being written."""
    target, is_stream = _destination(path, overwrite)
    if is_stream:
        _write_stream(path, target, payload)
        return
    with _temporary(target, overwrite) as (fd, _):
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())


@contextlib.contextmanager
def temp_path(path, *, overwrite: bool = True):
    """For writers that need a file name (meshio): yield a temporary file's
    name; when the block ends without error its content goes to ``path``
    (renamed onto it, or copied into a stream), on any error it is removed."""
    target, is_stream = _destination(path, overwrite)
    if is_stream:
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".",
                                   suffix=".tmp")
        os.close(fd)
        try:
            yield tmp
            with open(tmp, "rb") as fh:
                _write_stream(path, target, fh)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        return
    with _temporary(target, overwrite) as (fd, tmp):
        os.close(fd)
        yield tmp
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())


def check_destination(path, *, overwrite: bool) -> None:
    """Raise now what writing to ``path`` would raise for its destination
    (a directory, an input, an existing file without ``overwrite``), so a
    command can fail before doing its work; also a missing directory."""
    target, is_stream = _destination(path, overwrite)
    folder = os.path.dirname(target) or "."
    if not is_stream and not os.path.isdir(folder):
        raise NotADirectoryError(f"directory {os.path.dirname(os.fspath(path))} does not exist")


def _destination(path, overwrite):
    """(the file to write, whether it is a stream) for output ``path``,
    after the rules: never a directory, never an input, never an existing
    file without ``overwrite``."""
    path = os.fspath(path)
    is_stream = _names_a_descriptor(path)
    target = path if is_stream else os.path.realpath(path)
    try:
        st = os.stat(target)
    except FileNotFoundError:
        return target, is_stream
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(f"{path} is a directory")
    if _inputs is not None and stat.S_ISREG(st.st_mode) and \
            (st.st_dev, st.st_ino) in _inputs:
        raise IsAnInput(f"{path} is an input of this command (refusing to write over it)")
    is_stream = is_stream or not stat.S_ISREG(st.st_mode)
    if not is_stream and not overwrite:
        raise FileExistsError(f"{path} exists (refusing to overwrite it)")
    return target, is_stream


def _names_a_descriptor(path) -> bool:
    """Whether ``path`` reaches a /proc file descriptor link (``/dev/stdout``
    -> ``/proc/self/fd/1``, ``/dev/fd/N``), following symbolic links one at
    a time (the end of such a chain may be a pipe or a regular file: either
    way the descriptor is what is to be written)."""
    p = os.path.abspath(path)
    for _ in range(40):                       # the kernel's own limit on link chains
        folder = os.path.realpath(os.path.dirname(p))
        if folder == "/proc" or folder.startswith("/proc/"):
            return True
        p = os.path.join(folder, os.path.basename(p))
        try:
            link = os.readlink(p)
        except OSError:
            return False
        p = os.path.normpath(os.path.join(folder, link))
    return False


def _write_stream(path, target, payload) -> None:
    """Write ``payload`` (bytes or a binary file) straight into ``target``:
    no truncation (a device or pipe has none; a regular file behind a
    descriptor link is appended to, as the shell's ``>``/``>>`` set it up)."""
    flags = os.O_WRONLY
    with contextlib.suppress(OSError):
        if stat.S_ISREG(os.stat(target).st_mode):
            flags |= os.O_APPEND
    fd = os.open(target, flags)
    with os.fdopen(fd, "wb") as fh:
        if isinstance(payload, (bytes, bytearray, memoryview)):
            fh.write(payload)
        else:
            shutil.copyfileobj(payload, fh)
        fh.flush()


@contextlib.contextmanager
def _temporary(path, overwrite):
    """(fd, name) of a new temporary file beside ``path``, with the mode a
    plain ``open()`` would give; moved onto ``path`` when the block succeeds,
    removed when it fails."""
    directory = os.path.dirname(os.path.abspath(path))
    name = os.path.basename(path)
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
