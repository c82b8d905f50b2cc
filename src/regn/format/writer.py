"""The decoded parts of a REGN object -> canonical bytes.

The writer never patches an old table: it lays the six sections out in the
canonical order (each on a 16-byte boundary, the two face sentinels after
section 2), recomputes every pointer from record indices, and encodes a fresh
POF0 table listing exactly the expected pointer words.
"""

from __future__ import annotations

import numpy as np

from ..errors import LimitError
from . import pof0
from .layout import (ALIGN, BIG, CHUNK_HEADER_SIZE, FACE_SENTINELS, HEADER_SIZE, POINTERS,
                     SECTION, SECTION_NAMES, SIZES, STRIDES, U16_MAX, align, dtype_for)
from .reader import expected_pointer_words


#: The sections whose records hold pointers.
_HOLDERS = {section for section, _, _, _ in POINTERS}


def canonical_offsets(counts) -> tuple:
    """Data-relative start of each section in the canonical layout, and the
    data-area size: section 0 at 0x80, each next one 16-aligned, the face
    sentinels counted into section 2's span [seed/inferred]."""
    offs = []
    pos = HEADER_SIZE
    for k, n in enumerate(counts):
        pos = align(pos, ALIGN)
        offs.append(pos)
        pos += n * STRIDES[k] + (FACE_SENTINELS * STRIDES[k] if k == SECTION["faces"] else 0)
    return tuple(offs), align(pos, ALIGN)


def serialize(*, header, sections, cell_item, item_ref_start, ref_tet,
              byte_order=BIG, dialect=pof0.DIALECT_3, chunk_header=None,
              pof0_header=None, trailer=b"", as_bytearray=False, table=None) -> bytes:
    """Bytes of one REGN object (chunk + POF0 chunk + trailer).

    ``header`` is a header record (any byte order); counts and section
    pointers in it are recomputed, every other field is written as given.
    ``sections`` maps names to structured arrays of the layout dtypes (any
    byte order); pointer fields in them are recomputed from ``cell_item``
    (item index per cell, -1 for none), ``item_ref_start`` and ``ref_tet``.
    ``as_bytearray`` returns the buffer the object was built in (no final
    copy; ``regn.verify`` only compares it). ``table``: the POF0 table's
    bytes when the caller knows them already (``regn.verify``, for a read
    table that is the canonical encoding of exactly these pointer words).
    """
    counts = [len(sections[name]) for name in SECTION_NAMES]
    for name, n in zip(SECTION_NAMES, counts):
        if n > U16_MAX:
            raise LimitError(f"{n} {name} is more than the format's u16 limit of "
                            f"{U16_MAX}")
    offs, data_size = canonical_offsets(counts)
    if table is None:
        words = expected_pointer_words(offs, np.asarray(cell_item) >= 0,
                                       counts[SECTION["items"]], counts[SECTION["refs"]])
        table = pof0.encode(words, dialect)
    trailer = bytes(trailer)
    # the whole object in one buffer: chunk header, data area, POF0 chunk
    buf = bytearray(CHUNK_HEADER_SIZE + data_size + CHUNK_HEADER_SIZE + len(table)
                    + len(trailer))                 # zeros
    out = np.frombuffer(buf, dtype=np.uint8)
    data = out[CHUNK_HEADER_SIZE:CHUNK_HEADER_SIZE + data_size]

    hdr = np.array(header, dtype=dtype_for("header", byte_order)).reshape(1)
    hdr["counts"] = counts
    hdr["section_ptrs"] = offs
    data[:HEADER_SIZE] = hdr.view(np.uint8)

    recs = {}
    for name in SECTION_NAMES:
        arr = np.asarray(sections[name])
        want = dtype_for(name, byte_order)
        if name in _HOLDERS or arr.dtype != want:
            arr = arr.astype(want)          # a copy: pointers are rewritten
        recs[name] = np.ascontiguousarray(arr)
    targets = (cell_item, item_ref_start, ref_tet)       # in the order of POINTERS
    for (section, field, target, null), index in zip(POINTERS, targets):
        index = np.asarray(index, dtype=np.int64)
        ptr = offs[SECTION[target]] + SIZES[target] * index
        recs[section][field] = np.where(index >= 0, ptr, 0) if null else ptr
    for k, name in enumerate(SECTION_NAMES):
        raw = recs[name].view(np.uint8).reshape(-1)
        data[offs[k]:offs[k] + len(raw)] = raw

    hdr_dt = dtype_for("chunk_header", byte_order)
    chunk = np.zeros(1, hdr_dt) if chunk_header is None else \
        np.array(chunk_header, dtype=hdr_dt).reshape(1)
    chunk["tag"] = b"REGN"
    chunk["size"] = data_size
    ptab = np.zeros(1, hdr_dt) if pof0_header is None else \
        np.array(pof0_header, dtype=hdr_dt).reshape(1)
    ptab["tag"] = b"POF0"
    ptab["size"] = len(table)
    pos = CHUNK_HEADER_SIZE + data_size
    out[:CHUNK_HEADER_SIZE] = chunk.view(np.uint8)
    out[pos:pos + CHUNK_HEADER_SIZE] = ptab.view(np.uint8)
    pos += CHUNK_HEADER_SIZE
    out[pos:pos + len(table)] = np.frombuffer(table, np.uint8)
    out[pos + len(table):] = np.frombuffer(trailer, np.uint8)
    return buf if as_bytearray else bytes(buf)
