"""Find every POF0-relocated object in an arbitrary blob by structure alone.

An object is a chunk header (a 4-character tag and a size), ``size`` bytes of
data area, then a ``POF0`` chunk exactly where the size says, whose table
decodes cleanly with every listed word inside the data area and every pointer
value inside it too. Nothing else (names, a directory, alignment) is assumed.

The search streams through the blob a window at a time (a compiled loop,
:func:`regn.scan._kernels.window_candidates`): every position whose 4 bytes
look like a tag has its would-be size field read in both byte orders, and is
kept when the implied position ``s + 16 + size`` holds a ``POF0`` chunk
header whose table ends inside the blob. Each window's candidates are checked
one by one before the next window is searched, so memory is bounded by the
window whatever the blob holds (a blob of repeated ``POF0`` bytes has a tag
at every position).
"""

from __future__ import annotations

import mmap
import sys
from dataclasses import dataclass, field

import numpy as np

from ..errors import FormatError
from ..format import pof0 as _pof0
from ..format.chunk import frame_at
from ..format.layout import CHUNK_HEADER_SIZE

#: Bytes allowed in a tag: A-Z a-z 0-9 and '_' (space too, but not first).
_TAG_OK = np.zeros(256, dtype=bool)
for _c in b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_ ":
    _TAG_OK[_c] = True

EXTENSIONS = {b"REGN": "rgn", b"MCOL": "col"}
#: Starts examined at once: the candidate list never holds more.
WINDOW = 1 << 20


@dataclass
class Found:
    """One object found in a blob (offsets are into the blob)."""

    offset: int
    tag: bytes
    size: int            # whole object: chunk + data + POF0 chunk + table
    data_size: int
    byte_order: str
    pof0_dialect: int
    n_pointers: int
    canonical_pof0: bool
    valid_regn: bool | None = None
    notes: list = field(default_factory=list)

    @property
    def end(self) -> int:
        return self.offset + self.size

    @property
    def extension(self) -> str:
        return EXTENSIONS.get(self.tag, "bin")

    def to_json(self) -> dict:
        return {"offset": self.offset, "end": self.end, "tag": self.tag.decode("latin-1"),
                "size": self.size, "data_size": self.data_size,
                "byte_order": "big" if self.byte_order == ">" else "little",
                "pof0_dialect": self.pof0_dialect, "n_pointers": self.n_pointers,
                "canonical_pof0": self.canonical_pof0, "valid_regn": self.valid_regn,
                "notes": list(self.notes)}


def candidates(buf, *, progress=None):
    """(start, byte order) of every position whose header points at a
    ``POF0`` chunk header that fits in ``buf``, in ascending order, found a
    window of :data:`WINDOW` starts at a time (memory bounded by the window,
    whatever the blob holds). A start that fits in both byte orders comes
    once, big-endian (the order :func:`check` tries first)."""
    from ._kernels import window_candidates
    arr = np.frombuffer(buf, dtype=np.uint8)
    ends = len(arr) - 2 * CHUNK_HEADER_SIZE + 1   # a start needs two chunk headers
    release = getattr(buf, "madvise", None)       # an mmap: let go of pages passed
    released = 0
    for lo in range(0, max(ends, 0), WINDOW):
        hi = min(lo + WINDOW, ends)               # starts lo .. hi-1
        starts, little = window_candidates(arr, lo, hi, _TAG_OK)
        for start, le in zip(starts.tolist(), little.tolist()):
            yield start, "<" if le else ">"
        if release is not None and hi - released >= WINDOW:
            # every object from here on starts at hi or later
            upto = hi // mmap.PAGESIZE * mmap.PAGESIZE
            release(mmap.MADV_DONTNEED, released, upto - released)
            released = upto
        if progress is not None:
            progress(hi, ends)


def check(buf, start: int):
    """Validate the object at ``start``: returns a :class:`Found` or raises FormatError."""
    frame = frame_at(buf, start)
    if frame.data_size % 4:
        raise FormatError(f"data size {frame.data_size:#x} is not a whole number of words",
                          offset=start + 4)
    table = bytes(buf[frame.table_start:frame.end])
    data_words = frame.data_size // 4
    vals = np.frombuffer(buf, dtype=frame.byte_order + "u4", count=data_words,
                         offset=frame.data_start) if data_words else np.zeros(0, np.uint32)
    errors = []
    for dialect in _pof0.DIALECTS:
        try:
            t = _pof0.decode(table, dialect, base_offset=frame.table_start,
                             data_words=data_words)
        except FormatError as e:
            errors.append(e)
            continue
        if len(t.words) and np.any(vals[t.words] > frame.data_size):
            bad = int(t.words[np.argmax(vals[t.words] > frame.data_size)])
            errors.append(FormatError(
                f"pointer word {bad} holds {int(vals[bad]):#x}, outside the "
                f"{frame.data_size:#x}-byte data area", offset=frame.data_start + 4 * bad))
            if t.long_entries == 0:
                break
            continue
        notes = [] if t.canonical else list(t.notes)
        return Found(start, frame.tag, frame.end - start, frame.data_size,
                     frame.byte_order, dialect, len(t.words), t.canonical, None, notes)
    raise errors[0]


def regn_valid(blob: bytes, notes: list | None = None) -> bool:
    """Whether a REGN object is sound: ``regn.verify`` when available, else loads().

    Names of failed checks are appended to ``notes``.
    """
    try:
        from ..checks import verify
    except ImportError:          # verify not available: readable is the best we know
        verify = None
    try:
        if verify is not None:
            rep = verify(blob)
            if notes is not None:
                notes.extend(f"verify: {c.name} failed" for c in getattr(rep, "failed", []))
            return bool(rep.ok)
        from ..io import loads
        loads(blob).check_records()
        return True
    except Exception as e:       # any failure means "not a valid REGN"
        if notes is not None:
            notes.append(f"unreadable as REGN: {e}")
        return False


def scan(buf, *, validate: bool = True, progress=None,
         rejected: list | None = None) -> list[Found]:
    """Every object in ``buf`` (bytes, bytearray, mmap), in blob order.

    Overlapping finds are kept only when one does not lie inside an earlier
    accepted object (a look-alike inside a data area is not a second object).
    ``rejected``, when given, receives ``(offset, tag, reason)`` for candidates
    that had a header pointing at ``POF0`` but failed a later check.
    """
    out: list[Found] = []
    for start, _order in candidates(buf, progress=progress):
        if out and start < out[-1].end:
            if rejected is not None:
                rejected.append((start, bytes(buf[start:start + 4]),
                                 f"inside the object at {out[-1].offset:#x}"))
            continue
        try:
            f = check(buf, start)
        except FormatError as e:
            if rejected is not None:
                rejected.append((start, bytes(buf[start:start + 4]), str(e)))
            continue
        if validate and f.tag == b"REGN":
            f.valid_regn = regn_valid(bytes(buf[f.offset:f.end]), f.notes)
        out.append(f)
    return out


def tty_progress(stream=None):
    """A \\r progress callback on ``stream`` (stderr) when it is a TTY, else None."""
    stream = stream or sys.stderr
    if not (hasattr(stream, "isatty") and stream.isatty()):
        return None
    state = {"last": -1}

    def cb(done, total):
        pct = int(100 * done / max(total, 1))
        if pct != state["last"]:
            state["last"] = pct
            bar = "#" * (pct // 4)
            stream.write(f"\rscanning [{bar:<25}] {pct:3d}%")
            if done >= total:
                stream.write("\n")
            stream.flush()
    return cb
