"""The hex-editor descriptions of a REGN object, generated from :mod:`layout`.

Three files sit beside each other in ``src/regn/data/``:

* ``regn.ksy`` — Kaitai Struct (the Web IDE, ``kaitai-struct-compiler``,
  Kaitai's visualisers);
* ``regn.hexpat`` — an ImHex pattern;
* ``regn.bt`` — a 010 Editor binary template.

Their record declarations are written here from the layouts in
:mod:`regn.format.layout` (names, types, counts, in order), with the notes of
:data:`NOTES`; only the frame around them (chunk headers, the byte-order test,
the POF0 table and its dialect, where each section starts) is written by hand
below, once per language. Regenerate them after changing a layout::

    python -m regn.format.templates            # rewrite the three files
    python -m regn.format.templates --check    # exit 1 if one is out of date

The test suite runs the check, parses the records of all three back and
compares them with the layouts field by field, compiles the ``.ksy`` and runs
the ``.bt`` on objects the library writes.

Two things each template decides from the bytes, as the library does:

* the byte order: big-endian when the big-endian size field puts ``POF0``
  where it says, else little-endian when the little-endian one does;
* the POF0 dialect (a long entry of 3 or 4 bytes): 3 when reading the table
  with 3-byte long entries yields exactly the number of pointers a REGN has
  (6 section pointers, two per grid item, one per reference), else 4. The
  library checks the words themselves too; on the objects it writes the two
  rules agree.
"""

from __future__ import annotations

import json
import sys
from importlib import resources

from . import layout

#: Record -> the type name in each template: (ksy, hexpat, 010).
RECORD_TYPES = {
    "chunk_header": ("chunk_header", "ChunkHeader", "CHUNK_HEADER"),
    "header": ("data_header", "DataHeader", "DATA_HEADER"),
    "vertices": ("vertex", "Vertex", "VERTEX"),
    "tets": ("tet", "Tet", "TET"),
    "faces": ("face", "Face", "FACE"),
    "cells": ("cell", "Cell", "CELL"),
    "items": ("item", "Item", "ITEM"),
    "refs": ("ref", "Ref", "REF"),
}
#: Small value types the records use: f32[3] and f32[4] fields become a vector
#: with named components, and the portal table's rows a named pair.
VALUE_TYPES = {
    "vec3": (("vec3", "Vec3", "VEC3"), "f4", ("x", "y", "z")),
    "vec4": (("vec4", "Vec4", "VEC4"), "f4", ("x", "y", "z", "w")),
    "portal_pair": (("portal_pair", "PortalPair", "PORTAL_PAIR"), "f4", ("cost", "aux")),
}
#: Two-dimensional fields: (record, field) -> the value type of one row.
ROWS = {("tets", "portal"): "portal_pair"}
#: Scalar type codes -> (ksy, hexpat, 010).
SCALARS = {"u1": ("u1", "u8", "uchar"), "u2": ("u2", "u16", "ushort"),
           "u4": ("u4", "u32", "uint"), "f4": ("f4", "float", "float")}

#: One note per field of every layout, with its mark (docs/format.md).
NOTES = {
    ("chunk_header", "tag"): "[seed] 'REGN' or 'POF0'",
    ("chunk_header", "size"): "[seed] bytes of body after this 16-byte header",
    ("chunk_header", "flags"): "[seed] bit 0 = already relocated; 0 in files",
    ("chunk_header", "reserved"): "[unknown, written 0]",
    ("header", "bbox_min"): "[seed] x, y, z; w = 1.0",
    ("header", "bbox_max"): "[seed] x, y, z; w = 1.0",
    ("header", "extent"): "[seed] max - min; extent == cell_size * dims exactly",
    ("header", "extent_w"): "[unknown, written 0]",
    ("header", "cell_size"): "[seed] size of one grid cell",
    ("header", "cell_size_w"): "[unknown, written 0]",
    ("header", "dims"): "[seed] grid dims nx, ny, nz; counts[3] == nx*ny*nz",
    ("header", "dims_w"): "[unknown, written 0]",
    ("header", "counts"): "[seed] record count of sections 0-5 (u16: at most 65535 each)",
    ("header", "reserved_5c"): "[unknown, written 0]",
    ("header", "section_ptrs"): "[seed] data offsets of sections 0-5, all six in POF0; "
                                "section 0 at 0x80",
    ("header", "reserved_78"): "[unknown, written 0]",
    ("vertices", "xyz"): "[seed] a vertex position",
    ("tets", "centre"): "[seed] a position; builder: the vertex mean [inferred]",
    ("tets", "radius"): "[seed] local scale; builder: largest centre-to-vertex distance",
    ("tets", "verts"): "[inferred] vertex indices into section 0",
    ("tets", "faces"): "[seed] face indices into section 2, slots 0-3; builder: the face "
                       "opposite vertex k in slot k [inferred]",
    ("tets", "portal"): "[inferred] (cost, aux) per face-slot pair (0,1) (0,2) (0,3) "
                        "(1,2) (1,3) (2,3)",
    ("tets", "field_a"): "[unknown, written 0] small field A",
    ("tets", "field_b"): "[unknown, written 0] small field B",
    ("tets", "zero"): "[seed: ~100 % zero; kept]",
    ("faces", "normal"): "[seed] unit normal; builder: out of tetrahedron A",
    ("faces", "d"): "[seed] plane offset: n.p + d = 0",
    ("faces", "point"): "[seed] a point on the plane; builder: the face centroid",
    ("faces", "w"): "[seed] 1.0",
    ("faces", "own"): "[seed] own index, == record index",
    ("faces", "tet_a"): "[seed] tetrahedron A, the first to list the face",
    ("faces", "tet_b"): "[inferred] tetrahedron B, 0xFFFFFFFF on the boundary",
    ("faces", "slot_a"): "[seed] this face is tet[A].faces[slot_a]",
    ("faces", "slot_b"): "[inferred] this face is tet[B].faces[slot_b]; 0xFF on the boundary",
    ("faces", "zero"): "[inferred] zero",
    ("cells", "count"): "[seed] item count, 0 or 1",
    ("cells", "item_ptr"): "[seed] data offset of the cell's item (section 4); in POF0 "
                           "exactly when non-zero",
    ("items", "unknown"): "[unknown] builder: cell centre x, y, z and the cell's full "
                          "diagonal, as f32 bits",
    ("items", "n"): "[seed] number of references, >= 1",
    ("items", "refs_ptr"): "[seed] data offset of the first reference (section 5), in POF0",
    ("items", "cell_index"): "[unknown, small] builder: the linear cell index",
    ("items", "unknown2"): "[unknown, small] builder: 0",
    ("refs", "tet_ptr"): "[seed] data offset of a tetrahedron record, in POF0",
}

HEADER_LINES = (
    "REGN navigation mesh: a chunk (16-byte header, then the data area) and a POF0",
    "pointer-fixup table. Generated by `python -m regn.format.templates` from",
    "src/regn/format/layout.py (the regn project): edit that, never this file.",
    "Marks as in docs/format.md: [seed] established, [inferred] regn's reading",
    "(regn verify tests it), [unknown] kept bit for bit.",
    "Every pointer is a data offset: add 0x10 (the data area's start) for a file offset.",
)


# --- the fields of a record, in a language-neutral form -----------------------------
def fields(record):
    """[(name, kind, type, count, note)] of ``record``: kind 'scalar' (type a
    layout code, 'str4' for the 4-byte tag) or 'value' (type a VALUE_TYPES
    key); count None for one, else the number of elements."""
    floats = layout.FLOAT_WORDS.get(record, ())
    out = []
    for name, code, count in layout.LAYOUTS[record]:
        note = NOTES[(record, name)]
        if name in floats:
            code = "f4"
        if code == "S4":
            out.append((name, "scalar", "str4", None, note))
        elif isinstance(count, tuple):
            rows, width = count
            row = ROWS[(record, name)]
            assert len(VALUE_TYPES[row][2]) == width, (record, name)
            out.append((name, "value", row, rows, note))
        elif code == "f4" and count in (3, 4):
            out.append((name, "value", f"vec{count}", None, note))
        else:
            out.append((name, "scalar", code, count, note))
    return out


def _check_notes():
    declared = {(r, f) for r in layout.LAYOUTS for f, _, _ in layout.LAYOUTS[r]}
    missing, stale = declared - set(NOTES), set(NOTES) - declared
    assert not missing and not stale, (sorted(missing), sorted(stale))


# --- Kaitai Struct -------------------------------------------------------------------
def _q(text):
    """A YAML scalar that is never misread: a JSON string."""
    return json.dumps(text)


def _ksy_record(record, indent):
    pad = " " * indent
    ksy_name = RECORD_TYPES[record][0]
    lines = [f"{pad}{ksy_name}:",
             f"{pad}  doc: {_q(f'{layout.SIZES[record]} bytes (layout.{record})')}",
             f"{pad}  seq:"]
    for name, kind, typ, count, note in fields(record):
        lines.append(f"{pad}    - id: {name}")
        if typ == "str4":
            lines += [f"{pad}      type: str", f"{pad}      size: 4",
                      f"{pad}      encoding: ASCII"]
        else:
            t = VALUE_TYPES[typ][0][0] if kind == "value" else SCALARS[typ][0]
            lines.append(f"{pad}      type: {t}")
        if count is not None:
            lines += [f"{pad}      repeat: expr", f"{pad}      repeat-expr: {count}"]
        lines.append(f"{pad}      doc: {_q(note)}")
    lines += [pad + "  " + extra for extra in _KSY_EXTRAS.get(record, ())]
    return lines


def _ksy_value_type(key, indent):
    pad = " " * indent
    names, code, comps = VALUE_TYPES[key]
    lines = [f"{pad}{names[0]}:", f"{pad}  seq:"]
    for c in comps:
        lines += [f"{pad}    - id: {c}", f"{pad}      type: {SCALARS[code][0]}"]
    return lines


#: Derived values the Kaitai records carry (instances), by record.
_KSY_EXTRAS = {
    "faces": ("instances:", "  is_boundary:", "    value: tet_b == 0xffffffff"),
    "cells": ("instances:",
              "  item:",
              "    doc: \"the cell's item, when it has one\"",
              "    io: _root.object.data._io",
              "    pos: item_ptr",
              "    type: item",
              "    if: item_ptr != 0",
              "  item_index:",
              "    value: (item_ptr - _root.object.data.header.section_ptrs[4]) / 32",
              "    if: item_ptr != 0"),
    "items": ("instances:",
              "  refs:",
              "    doc: \"the item's references\"",
              "    io: _root.object.data._io",
              "    pos: refs_ptr",
              "    type: ref",
              "    repeat: expr",
              "    repeat-expr: n",
              "  first_ref:",
              "    value: (refs_ptr - _root.object.data.header.section_ptrs[5]) / 4"),
    "refs": ("instances:",
             "  tet_index:",
             "    value: (tet_ptr - _root.object.data.header.section_ptrs[1]) / 96"),
}

_KSY_SECTIONS_DOC = {
    "vertices": "[seed] section 0, at 0x80 then zero padding to 16",
    "tets": "[seed] section 1",
    "faces": "[seed] section 2, then two all-zero 48-byte sentinel records, not counted",
    "cells": "[seed] section 3, one per grid cell, index (iz*ny + iy)*nx + ix",
    "items": "[seed] section 4, one per occupied cell, in cell order",
    "refs": "[seed] section 5; the data area ends at its 16-aligned end [inferred]",
}


def ksy_text() -> str:
    _check_notes()
    head = "\n".join("# " + line for line in HEADER_LINES)
    lines = [head, "meta:", "  id: regn_object",
             "  title: REGN tetrahedral navigation mesh (chunk + POF0 pointer table)",
             "  file-extension: rgn", "  license: CC0-1.0",
             "doc: |"] + [("  " + line).rstrip() for line in _KSY_DOC] + [
             "doc-ref: docs/format.md (the regn project)"]
    lines += _KSY_ROOT
    lines += ["    types:"]
    for record in RECORD_TYPES:
        lines += _ksy_record(record, 6)
    for key in VALUE_TYPES:
        lines += _ksy_value_type(key, 6)
    lines += _ksy_data_area(6) + _KSY_POF0
    return "\n".join(lines) + "\n"


_KSY_DOC = (
    "One REGN object: the REGN chunk (its header, then the data area that is its",
    "body), then the POF0 chunk, whose body lists the data-area words that hold",
    "pointers. Every pointer is a data offset (add 0x10 for a file offset).",
    "",
    "Byte order: big-endian (the PowerPC title) or little-endian (every record",
    "field and both size fields; the POF0 table is a byte stream either way),",
    "decided as regn does: big-endian when the big-endian size field puts POF0",
    "where it says. POF0 dialect: a long entry is 3 bytes (this title's loader)",
    "or 4 (the public tools of the family); see object.pof0_dialect.",
)

_KSY_ROOT = [
    "seq:",
    "  - id: object",
    "    type: object",
    "instances:",
    "  size_be:",
    "    pos: 4",
    "    type: u4be",
    "  size_le:",
    "    pos: 4",
    "    type: u4le",
    "  pof0_tag_be:",
    "    pos: 16 + size_be",
    "    size: 4",
    "    if: size_be <= _io.size - 20",
    "  pof0_tag_le:",
    "    pos: 16 + size_le",
    "    size: 4",
    "    if: size_le <= _io.size - 20",
    "  is_le:",
    "    value: >-",
    "      not (size_be <= _io.size - 20 and pof0_tag_be == [0x50, 0x4f, 0x46, 0x30])",
    "      and (size_le <= _io.size - 20 and pof0_tag_le == [0x50, 0x4f, 0x46, 0x30])",
    "    doc: \"big-endian when its size field puts 'POF0' where it says, else little\"",
    "types:",
    "  object:",
    "    meta:",
    "      endian:",
    "        switch-on: _root.is_le",
    "        cases:",
    "          true: le",
    "          false: be",
    "    seq:",
    "      - id: chunk",
    "        type: chunk_header",
    "        doc: \"[seed] tag 'REGN', size = bytes of the data area\"",
    "      - id: data",
    "        size: chunk.size",
    "        type: data_area",
    "        doc: \"[seed] the data area: every pointer is an offset from its first byte\"",
    "      - id: pof0",
    "        type: pof0_chunk(pof0_dialect)",
    "        doc: \"[seed] right after the data area, at 0x10 + size (11/11)\"",
    "      - id: trailer",
    "        size-eos: true",
    "        doc: bytes after the POF0 body, kept as read",
    "    instances:",
    "      expected_pointers:",
    "        value: 6 + 2 * data.header.counts[4] + data.header.counts[5]",
    "        doc: \"[seed] six section pointers, a cell's and a reference run's pointer "
    "per item, every reference\"",
    "      pof0_as_3:",
    "        pos: 16 + chunk.size",
    "        type: pof0_chunk(3)",
    "      pof0_dialect:",
    "        value: \"pof0_as_3.table.pointer_count == expected_pointers ? 3 : 4\"",
    "        doc: \"3 when the table read with 3-byte long entries lists exactly "
    "expected_pointers words, else 4\"",
]


def _ksy_data_area(indent):
    pad = " " * indent
    lines = [f"{pad}data_area:", f"{pad}  doc: every position is relative to its first byte",
             f"{pad}  seq:", f"{pad}    - id: header", f"{pad}      type: data_header",
             f"{pad}  instances:"]
    for k, section in enumerate(layout.SECTION_NAMES):
        lines += [f"{pad}    {section}:", f"{pad}      pos: header.section_ptrs[{k}]",
                  f"{pad}      type: {RECORD_TYPES[section][0]}",
                  f"{pad}      repeat: expr", f"{pad}      repeat-expr: header.counts[{k}]",
                  f"{pad}      doc: {_q(_KSY_SECTIONS_DOC[section])}"]
    faces = layout.SECTION_NAMES.index("faces")
    size = layout.SIZES["faces"]
    lines += [f"{pad}    face_sentinels:",
              f"{pad}      pos: header.section_ptrs[{faces}] + {size} * header.counts[{faces}]",
              f"{pad}      size: {size * layout.FACE_SENTINELS}",
              f"{pad}      doc: \"[seed] the two all-zero face records after section 2\""]
    return lines


_KSY_POF0 = [
    "      pof0_chunk:",
    "        params:",
    "          - id: long_size",
    "            type: u1",
    "            doc: bytes of a long entry, 3 or 4",
    "        seq:",
    "          - id: header",
    "            type: chunk_header",
    "            doc: \"[seed] tag 'POF0', size = table bytes with the zero padding\"",
    "          - id: table",
    "            size: header.size",
    "            type: pof0_table(long_size)",
    "      pof0_table:",
    "        doc: |",
    "          [seed: the loader] Entries, each adding its delta (in 4-byte words)",
    "          to a running word index that starts at 0; the data-area word at",
    "          4 * index holds a pointer. The word indices are the running sums",
    "          of the entries' deltas. A zero byte ends the table (padding).",
    "        params:",
    "          - id: long_size",
    "            type: u1",
    "        seq:",
    "          - id: entries",
    "            type: pof0_entry(long_size)",
    "            repeat: until",
    "            repeat-until: _.is_end or _io.eof",
    "        instances:",
    "          pointer_count:",
    "            value: \"entries.size - (entries.last.is_end ? 1 : 0)\"",
    "      pof0_entry:",
    "        doc: |",
    "          The first byte's top two bits: 01 one byte (6-bit delta), 10 two",
    "          bytes (14 bits), 11 a long entry of long_size bytes (22 or 30",
    "          bits), 00 the end of the table. Bytes past the table's end are",
    "          not read (a table read in the wrong dialect then miscounts).",
    "        params:",
    "          - id: long_size",
    "            type: u1",
    "        seq:",
    "          - id: b0",
    "            type: u1",
    "          - id: b1",
    "            type: u1",
    "            if: kind >= 2 and not _io.eof",
    "          - id: b2",
    "            type: u1",
    "            if: kind == 3 and not _io.eof",
    "          - id: b3",
    "            type: u1",
    "            if: kind == 3 and long_size == 4 and not _io.eof",
    "        instances:",
    "          kind:",
    "            value: b0 >> 6",
    "            doc: 0 end of table, 1 one byte, 2 two bytes, 3 long",
    "          is_end:",
    "            value: kind == 0",
    "          delta:",
    "            value: >-",
    "              kind == 1 ? (b0 & 0x3f) :",
    "              kind == 2 ? ((b0 & 0x3f) << 8) | b1 :",
    "              kind == 3 and long_size == 3 ? ((b0 & 0x3f) << 16) | (b1 << 8) | b2 :",
    "              kind == 3 ? ((b0 & 0x3f) << 24) | (b1 << 16) | (b2 << 8) | b3 : 0",
    "            doc: word delta added to the running index",
]


# the six sections, each at its pointer (data offsets): (record, k, type names)
_SECTIONS = [(name, k, RECORD_TYPES[name]) for k, name in enumerate(layout.SECTION_NAMES)]


# --- ImHex pattern language ------------------------------------------------------------
def _c_fields(record, lang, pad="    "):
    """Member declarations of ``record`` for the C-like languages (lang 1:
    hexpat, 2: 010), one a line with its note."""
    lines = []
    for name, kind, typ, count, note in fields(record):
        if typ == "str4":
            t, count = "char", 4
        else:
            t = VALUE_TYPES[typ][0][lang] if kind == "value" else SCALARS[typ][lang]
        dims = "" if count is None else f"[{count}]"
        lines.append(f"{pad}{t} {name}{dims};  // {note}")
    return lines


def _c_value_types(lang, struct):
    lines = []
    for names, code, comps in VALUE_TYPES.values():
        body = [f"    {SCALARS[code][lang]} {c};" for c in comps]
        lines += struct(names[lang], body) + [""]
    return lines


def hexpat_text() -> str:
    _check_notes()

    def struct(name, body):
        return [f"struct {name} {{"] + body + ["};"]
    lines = ["// " + line for line in HEADER_LINES] + [
        "// Open a .rgn file in ImHex, then File > Import > Pattern File (or the",
        "// Pattern editor) with this file; the result is the variable `regn`.",
        "#pragma description REGN navigation mesh (chunk + POF0 pointer table)",
        "#pragma pattern_limit 0x4000000",
        "#pragma array_limit 0x10000",
        "", "import std.core;", "import std.mem;", ""]
    lines += _c_value_types(1, struct)
    for record in RECORD_TYPES:
        lines += struct(RECORD_TYPES[record][1], _c_fields(record, 1)) + [""]
    lines += _HEXPAT_FRAME
    return "\n".join(lines) + "\n"


_SECTIONS_HEXPAT = [
    f"    {names[1]} {name}[header.counts[{k}]] @ data_base + header.section_ptrs[{k}];"
    for name, k, names in _SECTIONS]

_HEXPAT_FRAME = [
    "// the byte order, as regn decides it: big-endian when its size field puts",
    "// 'POF0' where it says, else little-endian when that one does",
    "fn regn_fits(std::mem::Endian endian) {",
    "    u128 body_size = std::mem::read_unsigned(4, 4, endian);",
    "    if (body_size + 20 > std::mem::size()) return false;",
    "    return std::mem::read_string(16 + body_size, 4) == \"POF0\";",
    "};",
    "",
    "// is there another entry at `at` in a table ending at `end` (a zero byte ends it)?",
    "fn pof0_more(u128 at, u128 table_end) {",
    "    if (at >= table_end) return false;",
    "    return (std::mem::read_unsigned(at, 1) >> 6) != 0;",
    "};",
    "",
    "// entries a POF0 table at [start, end) holds when long entries take long_size bytes",
    "fn pof0_pointer_count(u128 start, u128 table_end, u8 long_size) {",
    "    u128 at = start;",
    "    u32 count = 0;",
    "    while (pof0_more(at, table_end)) {",
    "        u8 kind = std::mem::read_unsigned(at, 1) >> 6;",
    "        if (kind == 1) at = at + 1;",
    "        else if (kind == 2) at = at + 2;",
    "        else at = at + long_size;",
    "        count = count + 1;",
    "    }",
    "    return count;",
    "};",
    "",
    "// one POF0 entry: its top two bits give its length, the rest the delta in words",
    "struct Pof0Entry<auto LongSize> {",
    "    u8 b0;",
    "    if ((b0 >> 6) >= 2) {",
    "        u8 b1;",
    "    }",
    "    if ((b0 >> 6) == 3) {",
    "        u8 b2;",
    "    }",
    "    if ((b0 >> 6) == 3 && LongSize == 4) {",
    "        u8 b3;",
    "    }",
    "};",
    "",
    "// the POF0 chunk; long entries of 3 bytes when that reading lists exactly the",
    "// Expected pointers a REGN has, else 4",
    "struct Pof0Chunk<auto Expected> {",
    "    ChunkHeader header;  // [seed] tag 'POF0', size = table bytes with the zero padding",
    "    u128 table_end = $ + header.size;",
    "    u8 dialect = pof0_pointer_count($, table_end, 3) == Expected ? 3 : 4;",
    "    Pof0Entry<dialect> entries[while(pof0_more($, table_end))];",
    "    u8 padding[table_end - $];",
    "};",
    "",
    "// the data area: each section at its pointer (a data offset)",
    "struct DataArea {",
    "    DataHeader header;",
    "    u128 data_base = addressof(header);",
    *_SECTIONS_HEXPAT,
    "};",
    "",
    "struct RegnObject {",
    "    if (!regn_fits(std::mem::Endian::Big) && regn_fits(std::mem::Endian::Little))",
    "        std::core::set_endian(std::mem::Endian::Little);",
    "    else",
    "        std::core::set_endian(std::mem::Endian::Big);",
    "    ChunkHeader chunk;  // [seed] tag 'REGN', size = bytes of the data area",
    "    DataArea data;",
    "    // [seed] six section pointers, two per grid item, one per reference",
    "    Pof0Chunk<6 + 2 * data.header.counts[4] + data.header.counts[5]> pof0 "
    "@ 16 + chunk.size;",
    "};",
    "",
    "RegnObject regn @ 0x00;",
]


# --- 010 Editor binary template ----------------------------------------------------------
def bt_text() -> str:
    _check_notes()

    def struct(name, body):
        return ["typedef struct {"] + body + [f"}} {name};"]
    lines = ["// " + line for line in HEADER_LINES] + [
        "// Open a .rgn file in 010 Editor, then Templates > Run Template with this file.",
        "//------------------------------------------------",
        "//--- 010 Editor Binary Template",
        "//   File: regn.bt",
        "//   Category: Game",
        "//   File Mask: *.rgn",
        "//------------------------------------------------",
        ""]
    lines += _c_value_types(2, struct)
    for record in RECORD_TYPES:
        lines += struct(RECORD_TYPES[record][2], _c_fields(record, 2)) + [""]
    lines += _BT_FRAME
    return "\n".join(lines) + "\n"


_SECTIONS_BT = [
    line for name, k, names in _SECTIONS
    for line in (f"FSeek(base + header.section_ptrs[{k}]);",
                 f"{names[2]} {name}[header.counts[{k}]];")]

_BT_FRAME = [
    "// one POF0 entry: its top two bits give its length, the rest the delta in words",
    "typedef struct (int long_size) {",
    "    uchar b0;",
    "    if ((b0 >> 6) >= 2) uchar b1;",
    "    if ((b0 >> 6) == 3) uchar b2;",
    "    if ((b0 >> 6) == 3 && long_size == 4) uchar b3;",
    "} POF0_ENTRY;",
    "",
    "// the byte order, as regn decides it: big-endian when its size field puts",
    "// 'POF0' where it says, else little-endian when that one does",
    "int regn_fits() {",
    "    local int64 size = ReadUInt(4);",
    "    if (size + 20 > FileSize()) return 0;",
    "    return ReadUByte(16 + size) == 0x50 && ReadUByte(17 + size) == 0x4F",
    "        && ReadUByte(18 + size) == 0x46 && ReadUByte(19 + size) == 0x30;  // 'POF0'",
    "}",
    "",
    "// is there another entry at `at` in a table ending at `end` (a zero byte ends it)?",
    "int pof0_more(int64 at, int64 end) {",
    "    if (at >= end) return 0;",
    "    return (ReadUByte(at) >> 6) != 0;",
    "}",
    "",
    "// entries a POF0 table at [start, end) holds when long entries take long_size bytes",
    "int pof0_pointer_count(int64 start, int64 end, int long_size) {",
    "    local int64 at = start;",
    "    local int count = 0;",
    "    local int kind;",
    "    while (pof0_more(at, end)) {",
    "        kind = ReadUByte(at) >> 6;",
    "        if (kind == 1) at += 1;",
    "        else if (kind == 2) at += 2;",
    "        else at += long_size;",
    "        count++;",
    "    }",
    "    return count;",
    "}",
    "",
    "BigEndian();",
    "if (regn_fits() == 0) {",
    "    LittleEndian();",
    "    if (regn_fits() == 0) BigEndian();",
    "}",
    "CHUNK_HEADER chunk;  // [seed] tag 'REGN', size = bytes of the data area",
    "local int64 base = FTell();",
    "DATA_HEADER header;",
    *_SECTIONS_BT,
    "",
    "FSeek(base + chunk.size);",
    "CHUNK_HEADER pof0;  // [seed] tag 'POF0', size = table bytes with the zero padding",
    "local int64 table_end = FTell() + pof0.size;",
    "// 3-byte long entries when that reading lists exactly the pointers a REGN has",
    "local int expected = 6 + 2 * header.counts[4] + header.counts[5];",
    "local int dialect = pof0_pointer_count(FTell(), table_end, 3) == expected ? 3 : 4;",
    "while (pof0_more(FTell(), table_end))",
    "    POF0_ENTRY entry(dialect);",
]


# --- the files ----------------------------------------------------------------------------
#: Template file name -> its text.
GENERATORS = {"regn.ksy": ksy_text, "regn.hexpat": hexpat_text, "regn.bt": bt_text}


def data_dir():
    return resources.files("regn").joinpath("data")


def stale() -> list[str]:
    """Names of the template files that differ from what :mod:`layout` generates."""
    return [name for name, make in GENERATORS.items()
            if not data_dir().joinpath(name).is_file()
            or data_dir().joinpath(name).read_text() != make()]


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--check"]:
        names = stale()
        for name in names:
            print(f"src/regn/data/{name} is out of date: run python -m regn.format.templates")
        return 1 if names else 0
    if argv:
        print("usage: python -m regn.format.templates [--check]", file=sys.stderr)
        return 2
    for name, make in GENERATORS.items():
        path = data_dir().joinpath(name)
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(make())
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
