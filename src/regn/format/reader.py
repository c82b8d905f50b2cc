"""Bytes -> the decoded parts of a REGN object, validated against its size.

Reading is two steps, so that a corrupt count can never drive an allocation:
first the frame and the header, every count and pointer checked against the
data area's size; then each section as a zero-copy structured view.
The POF0 table is only decoded when someone asks (:func:`read_pof0`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import FormatError
from . import pof0
from .chunk import POF0_TAG, Frame, frame_at, read_u32
from .layout import (BIG, CHUNK_HEADER_SIZE, DATA_BASE, HEADER_SIZE, LITTLE, NO_SLOT, NO_TET,
                     POINTERS, SECTION, SECTION_NAMES, SIZES, STRIDES, WORD, dtype_for,
                     element_offset, field_offsets)

REGN_TAG = b"REGN"
_HDR = field_offsets("header")
#: What a record holding a pointer is called in messages.
_NOUN = {"cells": "cell", "items": "item", "refs": "reference"}


@dataclass
class RegnParts:
    """Everything read from one REGN object, in the file's byte order.

    ``sections`` maps each section name to a structured array (a view of the
    buffer). ``cell_item``, ``item_ref_start`` and ``ref_tet`` are the
    section-3/4/5 pointers turned into record indices (-1 for a null cell
    pointer); ``misaligned`` counts pointers that do not land on a record
    boundary (the index is then the record they fall inside).
    """

    frame: Frame
    data: memoryview                 # the data area (object offset 0x10 ...)
    header: np.void
    sections: dict
    section_offsets: tuple           # data-relative, as stored
    cell_item: np.ndarray
    item_ref_start: np.ndarray
    ref_tet: np.ndarray
    misaligned: dict
    pof0_body: bytes
    trailer: bytes
    path: str | None = None
    _pof0: object = field(default=None, repr=False)

    @property
    def byte_order(self) -> str:
        return self.frame.byte_order

    @property
    def counts(self) -> tuple:
        return tuple(int(c) for c in self.header["counts"])

    @property
    def data_words(self) -> np.ndarray:
        """The data area as u32 words in the file's byte order (word ``w`` is
        the one POF0 calls ``w``)."""
        return np.frombuffer(self.data, dtype=self.byte_order + "u4",
                             count=self.frame.data_size // WORD)


def _err(msg, offset, section=None):
    return FormatError(msg, offset=offset, section=section)


def parse(buf, start: int = 0, *, path=None) -> RegnParts:
    """Parse the REGN object at ``start`` of ``buf`` (bytes-like).

    Raises :class:`FormatError` naming the offset (absolute in ``buf``) and
    what was wrong.
    """
    try:
        return _parse(memoryview(buf).cast("B"), start, path)
    except FormatError as e:
        raise e.with_path(path) if path is not None else e


class TruncatedError(FormatError):
    """A :class:`FormatError` for an object that ends before its own sizes
    say: the plain reading first ("file truncated?"), then the field's offset
    and values (``offset`` is kept as usual)."""

    def _render(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message

    def with_path(self, path) -> "TruncatedError":
        return TruncatedError(self.message, offset=self.offset, path=str(path),
                              section=self.section)


def _size_said(buf, start):
    """The bytes the object at ``start`` says it needs when that is more than
    ``buf`` holds (its chunk size, or its POF0 chunk's, puts the end past the
    end of ``buf``: the file was cut short), else None."""
    n = len(buf)
    if n - start < 8 or bytes(buf[start:start + 4]) != REGN_TAG:    # not a REGN at all
        return None
    ends = []
    for order in (BIG, LITTLE):
        pof = start + DATA_BASE + read_u32(buf, start + 4, order)
        if pof + CHUNK_HEADER_SIZE <= n and bytes(buf[pof:pof + 4]) == POF0_TAG:
            end = pof + CHUNK_HEADER_SIZE + read_u32(buf, pof + 4, order)
            return end - start if end > n else None
        ends.append(pof + CHUNK_HEADER_SIZE)
    return min(ends) - start if min(ends) > n else None


def _frame(buf, start):
    """:func:`frame_at`; an object cut short is said so in plain words first."""
    try:
        return frame_at(buf, start, expect_tag=REGN_TAG)
    except FormatError as e:
        said = _size_said(buf, start)
        if said is None:
            raise
        where = f"offset {e.offset:#x}: " if e.offset is not None else ""
        raise TruncatedError(
            f"file truncated? it is {_grouped(len(buf) - start)} bytes, its chunk headers "
            f"say at least {_grouped(said)} ({where}{e.section + ': ' if e.section else ''}"
            f"{e.message})", offset=e.offset, section=e.section) from None


def _grouped(n: int) -> str:
    """2104896 -> '2 104 896'."""
    return f"{n:,}".replace(",", " ")


def _parse(buf, start, path):
    if len(buf) - start == 0:
        raise FormatError("empty file: no REGN object")
    fr = _frame(buf, start)
    order = fr.byte_order
    d0 = fr.data_start
    size = fr.data_size
    if size < HEADER_SIZE:
        raise _err(f"data area is {size:#x} bytes, smaller than the {HEADER_SIZE:#x}-byte "
                   "header", start + 4)
    data = buf[d0:d0 + size]
    header = np.frombuffer(data, dtype=dtype_for("header", order), count=1)[0]

    for name in ("bbox_min", "bbox_max", "extent", "cell_size"):
        with np.errstate(invalid="ignore"):     # a signalling NaN is reported below
            vals = np.asarray(header[name], dtype=np.float64)
        if not np.all(np.isfinite(vals)):
            raise _err(f"header {name} is not finite: {vals.tolist()}", d0 + _HDR[name])
    cell = np.asarray(header["cell_size"], np.float64)
    if np.any(cell <= 0):
        raise _err(f"header cell size must be positive, is {cell.tolist()}",
                   d0 + _HDR["cell_size"])
    if np.any(np.asarray(header["bbox_max"][:3], np.float64)
              < np.asarray(header["bbox_min"][:3], np.float64)):
        raise _err("header bbox max is below bbox min", d0 + _HDR["bbox_max"])
    dims = [int(v) for v in header["dims"]]
    counts = [int(c) for c in header["counts"]]
    if min(dims) < 1:
        raise _err(f"grid dims {dims} must all be at least 1", d0 + _HDR["dims"])
    n_cells = dims[0] * dims[1] * dims[2]
    if n_cells != counts[3]:
        raise _err(f"grid dims {dims[0]}x{dims[1]}x{dims[2]} = {n_cells} cells but the "
                   f"cell count is {counts[3]}", d0 + element_offset("header", "counts", 3))

    ptrs = [int(p) for p in header["section_ptrs"]]
    sections = {}
    for k, name in enumerate(SECTION_NAMES):
        p, n, stride = ptrs[k], counts[k], STRIDES[k]
        at = d0 + element_offset("header", "section_ptrs", k)
        if p < HEADER_SIZE or p > size:
            raise _err(f"section {k} ({name}) pointer {p:#x} is outside the data area "
                       f"({HEADER_SIZE:#x}..{size:#x})", at)
        span = n * stride
        if p + span > size:
            raise _err(f"section {k} ({name}): {n} records of {stride} bytes from {p:#x} "
                       f"run past the data area's end at {size:#x}",
                       d0 + element_offset("header", "counts", k))
        sections[name] = np.frombuffer(data, dtype=dtype_for(name, order), count=n,
                                       offset=p)
    n_r = counts[SECTION["refs"]]
    misaligned = {}
    cell_pointer, item_pointer, _ = POINTERS
    cell_item = _to_index(sections, ptrs, counts, cell_pointer, d0, misaligned)
    item_ref_start = _to_index(sections, ptrs, counts, item_pointer, d0, misaligned)
    n_refs = sections["items"]["n"].astype(np.int64)
    over = item_ref_start + n_refs > n_r
    if over.any():
        i = int(np.argmax(over))
        raise _err(f"item {i} lists {int(n_refs[i])} references from reference "
                   f"{int(item_ref_start[i])}, past the {n_r} there are",
                   _record_at(d0, ptrs, "items", i, "n"), "items")

    table = bytes(buf[fr.table_start:fr.end])
    trailer = bytes(buf[fr.end:]) if start == 0 else b""
    return RegnParts(fr, data, header, sections, tuple(ptrs), cell_item,
                     item_ref_start, None, misaligned, table, trailer,
                     str(path) if path is not None else None)


def _record_at(d0, ptrs, section, i, field=None):
    """Buffer offset of record ``i`` of ``section`` (of its ``field``)."""
    at = d0 + ptrs[SECTION[section]] + SIZES[section] * i
    return at + (field_offsets(section)[field] if field else 0)


def _to_index(sections, ptrs, counts, pointer, d0, misaligned):
    """The pointer field ``pointer`` (an entry of :data:`POINTERS`) of every
    record -> record indices in the section it points into; each must land
    inside it (a null pointer is -1 where allowed). Pointers that fall inside
    a record rather than on its start are counted in ``misaligned``."""
    section, field, target, allow_null = pointer
    k, stride, count = SECTION[target], SIZES[target], counts[SECTION[target]]
    what = _NOUN[section]
    v = sections[section][field].astype(np.int64)
    null = v == 0 if allow_null else np.zeros(len(v), dtype=bool)
    rel = v - ptrs[k]
    bad = ((rel < 0) | (rel >= stride * count)) & ~null
    if bad.any():
        i = int(np.argmax(bad))
        raise _err(f"{what} {i} points at {int(v[i]):#x}, outside section {k} "
                   f"({ptrs[k]:#x}..{ptrs[k] + stride * count:#x})",
                   _record_at(d0, ptrs, section, i, field))
    misaligned[what] = int(np.count_nonzero((rel % stride != 0) & ~null))
    return np.where(null, -1, rel // stride)


def check_records(parts: RegnParts) -> None:
    """The per-record checks loading defers: every stored index names a record
    that exists, every reference points into section 1, vertices are finite.
    Fills ``parts.ref_tet``. Raises FormatError at the first bad record."""
    if parts.ref_tet is not None:
        return
    try:
        _check_records(parts)
    except FormatError as e:
        raise e.with_path(parts.path) if parts.path else e


def _check_records(parts):
    sections, ptrs, d0 = parts.sections, parts.section_offsets, parts.frame.data_start
    n_v, n_t, n_f, n_c, n_i, n_r = parts.counts

    def first_bad(mask):
        return int(np.argmax(mask))

    tets = sections["tets"]
    for fld, limit, what in (("verts", n_v, "vertex"), ("faces", n_f, "face")):
        vals = tets[fld]
        bad = vals >= limit
        if bad.any():
            t = first_bad(bad.any(axis=1))
            raise _err(f"tetrahedron {t} names {what} {vals[t].tolist()}, but there are "
                       f"{limit}", _record_at(d0, ptrs, "tets", t, fld), "tets")
    faces = sections["faces"]
    checks = (("tet_a", faces["tet_a"] >= n_t, "tetrahedron A"),
              ("tet_b", (faces["tet_b"] >= n_t) & (faces["tet_b"] != NO_TET),
               "tetrahedron B"),
              ("slot_a", faces["slot_a"] > 3, "slot i"),
              ("slot_b", (faces["slot_b"] > 3) & (faces["slot_b"] != NO_SLOT), "slot j"))
    for fld, bad, what in checks:
        if bad.any():
            f = first_bad(bad)
            raise _err(f"face {f} has {what} = {int(faces[fld][f])}, out of range",
                       _record_at(d0, ptrs, "faces", f, fld), "faces")
    verts = sections["vertices"]["xyz"]
    finite = np.isfinite(verts).all(axis=1)
    if not finite.all():
        v = first_bad(~finite)
        raise _err(f"vertex {v} is not finite: {verts[v].tolist()}",
                   _record_at(d0, ptrs, "vertices", v), "vertices")
    parts.ref_tet = _to_index(sections, ptrs, parts.counts, POINTERS[2], d0,
                              parts.misaligned)


def read_pof0(parts: RegnParts, expected_words=None) -> pof0.Pof0Table:
    """Decode the POF0 table, choosing the dialect as the spec says.

    The seed's 3-byte form is tried first; if it does not decode into an
    acceptable set (every word and every pointer value inside the data area,
    and equal to ``expected_words`` when given), the 4-byte form is tried.
    When neither is acceptable the first one that decodes at all is returned
    (verify then reports the mismatch); when neither decodes, the 3-byte
    error is raised.
    """
    if parts._pof0 is not None:
        return parts._pof0
    words_in_data = parts.frame.data_size // WORD
    base = parts.frame.table_start
    results, errors = [], []
    for dialect in pof0.DIALECTS:
        try:
            t = pof0.decode(parts.pof0_body, dialect, base_offset=base,
                            data_words=words_in_data)
        except FormatError as e:
            errors.append(e)
            continue
        results.append(t)
        if _acceptable(parts, t.words, expected_words):
            parts._pof0 = t
            return t
        if t.long_entries == 0:
            break  # both dialects read a table without long entries the same way
    if results:
        parts._pof0 = results[0]
        return results[0]
    err = errors[0]
    raise err.with_path(parts.path) if parts.path else err


def _acceptable(parts, words, expected):
    vals = parts.data_words[words]
    if np.any(vals >= parts.frame.data_size):
        return False
    if expected is not None:
        ascending = len(words) < 2 or bool(np.all(words[1:] > words[:-1]))
        return np.array_equal(words if ascending else np.sort(words),
                              np.asarray(expected))
    return True


def expected_pointer_words(section_offsets, cell_ptr_nonzero, n_items, n_refs):
    """Word indices the POF0 table of a REGN must list, sorted [seed].

    The six header section pointers, the item pointer of every cell whose
    pointer is non-zero, the refs pointer of every item, and every reference.
    """
    off = section_offsets
    holders = {"cells": np.flatnonzero(cell_ptr_nonzero), "items": np.arange(n_items),
               "refs": np.arange(n_refs)}
    groups = [element_offset("header", "section_ptrs", np.arange(6))]
    for section, name, _, _ in POINTERS:
        groups.append(off[SECTION[section]] + SIZES[section] * holders[section]
                      + field_offsets(section)[name])
    # the groups are each ascending (and in order, in a canonical layout):
    # the stable sort (timsort) is linear on such runs
    words = np.sort(np.concatenate(groups).astype(np.int64) // WORD, kind="stable")
    return words[np.concatenate([[True], words[1:] != words[:-1]])] if len(words) else words
