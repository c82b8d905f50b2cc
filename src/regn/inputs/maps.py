"""The bytes of a map file, read with a bound.

A regular file no larger than the biggest object the format can describe
(:data:`WHOLE_FILE_LIMIT`) is read whole, trailer and all. Anything else
(``/dev/zero``, ``/dev/urandom``, a pipe, a 10 GB file) is read as far as
its chunk headers say: the 16-byte REGN header, the data area its size
gives, the POF0 chunk there, and at most :data:`MAX_TRAILER` bytes after
it; more than that is an error. So no input makes a map reader hold more
than the object it declares, and a stream that is not a REGN object stops
after its first 16 bytes.
"""

from __future__ import annotations

import os
import stat

from .. import _atomic
from ..errors import FormatError, RegnError
from ..format.chunk import POF0_TAG
from ..format.layout import CHUNK_HEADER_SIZE, DATA_BASE

REGN_TAG = b"REGN"
#: The largest size field is 2^32 - 1: a file up to the chunk header plus
#: that much data is read whole without looking at it first.
WHOLE_FILE_LIMIT = DATA_BASE + (1 << 32)
#: Bytes after the POF0 table a streamed (or oversized) map may carry.
MAX_TRAILER = 1 << 20
_BLOCK = 1 << 24


def read_map_bytes(path) -> bytes:
    """The bytes of the map file ``path`` (see the module's rules).
    RegnError when it cannot be read, FormatError when a streamed map goes
    on past its object by more than :data:`MAX_TRAILER` bytes."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            _atomic.note_input(path)
            if stat.S_ISREG(st.st_mode) and st.st_size <= WHOLE_FILE_LIMIT:
                return fh.read()
            return _read_declared(fh, path)
    except OSError as e:
        raise RegnError(f"{path}: cannot read: {e.strerror or e}") from None


def _read_declared(fh, path) -> bytes:
    buf = bytearray()
    if not _fill(fh, buf, CHUNK_HEADER_SIZE) or buf[:4] != REGN_TAG:
        return bytes(buf)                 # too short, or not REGN: the parser says which
    # the POF0 chunk is where the size field says in one byte order; the
    # nearer candidate is tried first (the parser then picks the same one)
    order = None
    for at, o in sorted({(DATA_BASE + int.from_bytes(buf[4:8], o), o)
                         for o in ("little", "big")}):
        if not _fill(fh, buf, at + CHUNK_HEADER_SIZE):
            return bytes(buf)             # the stream ends first: the parser says so
        if buf[at:at + 4] == POF0_TAG:
            order, pof0_at = o, at
            break
    if order is None:
        return bytes(buf)                 # no POF0 where either byte order says
    table = int.from_bytes(buf[pof0_at + 4:pof0_at + 8], order)
    end = pof0_at + CHUNK_HEADER_SIZE + table
    if _fill(fh, buf, end + MAX_TRAILER + 1):
        raise FormatError(f"more than {MAX_TRAILER} bytes after the POF0 table "
                          "(read stopped there: a map file holds one object)",
                          offset=end, path=path)
    return bytes(buf)


def _fill(fh, buf: bytearray, size: int) -> bool:
    """Read from ``fh`` until ``buf`` holds ``size`` bytes; False at end of file."""
    while len(buf) < size:
        block = fh.read(min(size - len(buf), _BLOCK))
        if not block:
            return False
        buf += block
    return True
