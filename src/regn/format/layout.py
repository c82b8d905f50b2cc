"""Every on-disc record of a REGN object, declared once as a numpy dtype.

This module (with :mod:`regn.format.chunk` and :mod:`regn.format.pof0`) is the
only place in regn that knows byte offsets. Citations refer to the project's
format document, ``docs/format.md``; the marks are its: [seed] established,
[inferred] our reading (verify tests it), [unknown] kept bit-for-bit.

Each layout is written once as a list of ``(name, type, count)`` with byte-order
free type codes; :func:`dtype_for` turns it into a concrete big- (``'>'``) or
little-endian (``'<'``) structured dtype. [unknown] float words are declared as
``u4`` so their exact bits survive any conversion.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

BIG = ">"
LITTLE = "<"

#: Sections start on 16-byte boundaries [seed]; padding is written as zeros.
ALIGN = 16
#: Every chunk header (REGN and POF0) is 16 bytes [seed].
CHUNK_HEADER_SIZE = 16
#: The data area starts after the REGN chunk header; every stored pointer is
#: relative to it [seed: the loader's fixup base is chunk + 0x10].
DATA_BASE = 0x10
#: The data-area header is 0x80 bytes and section 0 starts right after it [seed].
HEADER_SIZE = 0x80
#: Section counts are u16 [seed]: no section holds more than this many records.
U16_MAX = 0xFFFF
#: Face record slot value / tetrahedron index meaning "no tetrahedron" [inferred].
NO_TET = 0xFFFFFFFF
NO_SLOT = 0xFF
#: Number of all-zero sentinel face records after section 2 [seed, 11/11].
FACE_SENTINELS = 2
#: Every pointer is a u32 word, and POF0 counts in words of this many bytes [seed].
WORD = 4
#: The bits of float32 1.0: the face record's ``w`` word and the bbox w [seed].
F32_ONE_BITS = 0x3F800000

#: The six face-slot pairs of a tetrahedron's portal-cost table, in file order
#: [inferred]: pair p joins face slots PORTAL_PAIRS[p].
PORTAL_PAIRS = ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3))

SECTION_NAMES = ("vertices", "tets", "faces", "cells", "items", "refs")
#: Section number of each section name.
SECTION = {name: k for k, name in enumerate(SECTION_NAMES)}

# --- chunk header, 16 bytes, same shape for REGN and POF0 ----------------------
CHUNK_HEADER = [
    ("tag", "S4", None),        # [seed] 'REGN' / 'POF0'; bytes, no byte order
    ("size", "u4", None),       # [seed] bytes of body after the 16-byte header
    ("flags", "u1", None),      # [seed] bit 0 = already relocated; 0 in files
    ("reserved", "u1", 7),      # [unknown, written 0]
]

# --- data-area header, 0x80 bytes ----------------------------------------------
HEADER = [
    ("bbox_min", "f4", 4),      # 0x00 [seed] x, y, z, w = 1.0
    ("bbox_max", "f4", 4),      # 0x10 [seed] x, y, z, w = 1.0
    ("extent", "f4", 3),        # 0x20 [seed] max - min
    ("extent_w", "u4", None),   # 0x2C [unknown, written 0]
    ("cell_size", "f4", 3),     # 0x30 [seed]
    ("cell_size_w", "u4", None),  # 0x3C [unknown, written 0]
    ("dims", "u4", 3),          # 0x40 [seed] nx, ny, nz
    ("dims_w", "u4", None),     # 0x4C [unknown, written 0]
    ("counts", "u2", 6),        # 0x50 [seed] one record count per section
    ("reserved_5c", "u4", None),  # 0x5C [unknown, written 0]
    ("section_ptrs", "u4", 6),  # 0x60 [seed] data-relative, all six in POF0
    ("reserved_78", "u4", 2),   # 0x78 [unknown, written 0]
]

# --- section 0: vertex, 12 bytes [seed] ----------------------------------------
VERTEX = [
    ("xyz", "f4", 3),
]

# --- section 1: tetrahedron, 96 bytes ------------------------------------------
TET = [
    ("centre", "f4", 3),        # 0x00 [seed] a position; builder: vertex mean
    ("radius", "f4", None),     # 0x0C [seed] local scale; builder: max |v - centre|
    ("verts", "u2", 4),         # 0x10 [inferred] vertex indices into section 0
    ("faces", "u2", 4),         # 0x18 [seed] face indices, slots 0-3
    ("portal", "f4", (6, 2)),   # 0x20 [inferred] (cost, aux) per PORTAL_PAIRS
    ("field_a", "u4", None),    # 0x50 [unknown, written 0]
    ("field_b", "u4", None),    # 0x54 [unknown, written 0]
    ("zero", "u4", 2),          # 0x58 [seed: ~100 % zero; kept]
]

# --- section 2: face, 48 bytes --------------------------------------------------
FACE = [
    ("normal", "f4", 3),        # 0x00 [seed] unit normal, out of tetrahedron A
    ("d", "f4", None),          # 0x0C [seed] n.p + d = 0
    ("point", "f4", 3),         # 0x10 [seed] a point on the plane; builder: centroid
    ("w", "u4", None),          # 0x1C [seed] 1.0 (kept as bits)
    ("own", "u4", None),        # 0x20 [seed] == record index
    ("tet_a", "u4", None),      # 0x24 [seed] first tetrahedron listing the face
    ("tet_b", "u4", None),      # 0x28 [inferred] second one, NO_TET on the boundary
    ("slot_a", "u1", None),     # 0x2C [seed] this face is tet[A].faces[slot_a]
    ("slot_b", "u1", None),     # 0x2D [inferred] ... tet[B].faces[slot_b], NO_SLOT
    ("zero", "u2", None),       # 0x2E [inferred] zero
]

# --- section 3: cell index record, 8 bytes [seed: POF0 pointer map] ------------
CELL = [
    ("count", "u4", None),      # 0x0 [seed] item count, 0 or 1
    ("item_ptr", "u4", None),   # 0x4 [seed] data-relative; in POF0 iff non-zero
]

# --- section 4: cell item, 32 bytes ---------------------------------------------
ITEM = [
    ("unknown", "u4", 4),       # 0x00 [unknown] builder: cell centre xyz, diagonal (f32 bits)
    ("n", "u4", None),          # 0x10 [seed] number of references, >= 1
    ("refs_ptr", "u4", None),   # 0x14 [seed] data-relative, in POF0
    ("cell_index", "u4", None),  # 0x18 [unknown, small] builder: linear cell index
    ("unknown2", "u4", None),   # 0x1C [unknown, small] builder: 0
]

# --- section 5: tetrahedron reference, 4 bytes [seed] --------------------------
REF = [
    ("tet_ptr", "u4", None),    # data-relative pointer to a section-1 record
]

#: Declared record sizes; :func:`dtype_for` asserts each layout adds up to it.
SIZES = {"chunk_header": 16, "header": HEADER_SIZE, "vertices": 12, "tets": 96,
         "faces": 48, "cells": 8, "items": 32, "refs": 4}
LAYOUTS = {"chunk_header": CHUNK_HEADER, "header": HEADER, "vertices": VERTEX,
           "tets": TET, "faces": FACE, "cells": CELL, "items": ITEM, "refs": REF}
#: Record stride of each section, in section order.
STRIDES = tuple(SIZES[name] for name in SECTION_NAMES)

#: The record pointers of the grid [seed: the POF0 pointer map], as
#: (section holding the pointer, its field, section pointed into, null allowed):
#: a cell's item, an item's first reference, a reference's tetrahedron.
POINTERS = (("cells", "item_ptr", "items", True),
            ("items", "refs_ptr", "refs", False),
            ("refs", "tet_ptr", "tets", False))


@lru_cache(maxsize=None)
def dtype_for(name: str, order: str = BIG) -> np.dtype:
    """The structured dtype of record ``name`` in byte order ``order``."""
    if order not in (BIG, LITTLE, "="):
        raise ValueError(f"byte order must be '>' or '<', not {order!r}")
    fields = []
    for field, code, count in LAYOUTS[name]:
        full = code if code.startswith("S") else order + code
        fields.append((field, full) if count is None else (field, full, count))
    dt = np.dtype(fields)
    assert dt.itemsize == SIZES[name], (name, dt.itemsize)
    return dt


def field_offsets(name: str) -> dict[str, int]:
    """Byte offset of each field of record ``name`` within the record."""
    dt = dtype_for(name)
    return {field: dt.fields[field][1] for field in dt.names}


def element_offset(name: str, field: str, index: int = 0) -> int:
    """Byte offset within record ``name`` of element ``index`` (flat) of the
    array field ``field`` (e.g. the header's ``counts[3]``)."""
    sub, offset = dtype_for(name).fields[field][:2]
    return offset + index * sub.base.itemsize


def align(n: int, to: int = ALIGN) -> int:
    """``n`` rounded up to a multiple of ``to``."""
    return (n + to - 1) // to * to


#: [seed] f32 words that the layouts above declare as ``u4``, so that their exact
#: bits survive every conversion (the checks compare them with bit patterns):
#: record -> fields. ``regn dump`` and the hex-editor templates show them as the
#: floats docs/format.md says they are.
FLOAT_WORDS = {"faces": ("w",)}


@lru_cache(maxsize=None)
def display_dtype(name: str, order: str = BIG) -> np.dtype:
    """:func:`dtype_for` with the :data:`FLOAT_WORDS` of ``name`` as ``f4``:
    the same bytes, read as docs/format.md types them (a view, not a cast)."""
    floats = FLOAT_WORDS.get(name, ())
    fields = []
    for field, code, count in LAYOUTS[name]:
        if field in floats:
            code = "f4"
        full = code if code.startswith("S") else order + code
        fields.append((field, full) if count is None else (field, full, count))
    dt = np.dtype(fields)
    assert dt.itemsize == SIZES[name], (name, dt.itemsize)
    return dt
