meta:
  id: regn
  title: REGN tetrahedral navigation mesh (chunk + POF0 pointer table)
  file-extension: rgn
  license: CC0-1.0
  endian: be
doc: |
  One REGN object: a 16-byte chunk header, the data area (body of the chunk),
  then a POF0 chunk whose body is the pointer-offset table. Every stored pointer
  is an offset relative to the data area (object offset 0x10) [seed].
  Marks follow the project's format document (docs/format.md):
  [seed] established on 11 of 11 objects, [inferred] the project's reading
  (regn verify tests it), [unknown] kept bit-for-bit.

  Byte order: this spec is big-endian, like the PowerPC title [seed]. A
  little-endian object (every record field and the chunk size fields
  little-endian, the POF0 table still a big-endian byte stream) is also read
  by the regn library but not by this spec.
doc-ref: docs/format.md
seq:
  - id: chunk
    type: chunk_header
    doc: "[seed] tag 'REGN', size = bytes of data area"
  - id: data
    size: chunk.body_size
    type: data_area
    doc: "[seed] the data area; pointers inside it are relative to its first byte"
  - id: pof0
    type: pof0_chunk
    doc: "[seed] starts right after the data area, at 0x10 + size (11/11)"
  - id: trailer
    size-eos: true
    doc: bytes after the POF0 body, kept as read
types:
  chunk_header:
    doc: 16 bytes, same shape for REGN and POF0 [seed]
    seq:
      - id: tag
        type: str
        size: 4
        encoding: ASCII
        doc: "[seed] 'REGN' or 'POF0'"
      - id: body_size
        type: u4
        doc: "[seed] bytes that follow the 16-byte header"
      - id: flags
        type: u1
        doc: "[seed] bit 0 = already relocated; 0 in files"
      - id: reserved
        size: 7
        doc: "[unknown, written 0]"
  pof0_chunk:
    seq:
      - id: header
        type: chunk_header
        doc: "[seed] tag 'POF0', body_size = table bytes including zero padding"
      - id: table
        size: header.body_size
        type: pof0_table
  pof0_table:
    doc: |
      [seed: the loader's apply_pof0] A byte stream of entries; each adds its
      delta (in 4-byte words) to a running word index that starts at 0 and is
      never reset; the data-area word at 4 * index is a pointer. A first byte
      whose top two bits are 00 ends the table (zero padding to a multiple of 4).
      The word indices are the running sums of the entries' deltas.
    seq:
      - id: entries
        type: pof0_entry
        repeat: until
        repeat-until: _.is_end or _io.eof
  pof0_entry:
    doc: |
      Top two bits of the first byte: 01 = 1 byte (6-bit delta), 10 = 2 bytes
      (14 bits), 11 = long entry. This spec reads the long entry as 3 bytes /
      22 bits, the seed's reading of this title's loader [seed]. The public
      tools of the same family (HedgeLib, SharpNeedle, SA Tools) read 4 bytes /
      30 bits; an object written in that dialect would need a fourth byte here
      (regn detects and reads both; `regn info` says which one an object uses).
    seq:
      - id: b0
        type: u1
      - id: b1
        type: u1
        if: kind >= 2
      - id: b2
        type: u1
        if: kind == 3
    instances:
      kind:
        value: b0 >> 6
        doc: 0 end of table, 1 one byte, 2 two bytes, 3 long (three bytes)
      is_end:
        value: kind == 0
      delta:
        value: >-
          kind == 1 ? (b0 & 0x3f) :
          kind == 2 ? ((b0 & 0x3f) << 8) | b1 :
          kind == 3 ? ((b0 & 0x3f) << 16) | (b1 << 8) | b2 : 0
        doc: word delta added to the running index
  vec3:
    seq:
      - id: x
        type: f4
      - id: y
        type: f4
      - id: z
        type: f4
  data_area:
    doc: All offsets are relative to the start of the data area.
    seq:
      - id: header
        type: data_header
    instances:
      vertices:
        pos: header.section_ptrs[0]
        type: vec3
        repeat: expr
        repeat-expr: header.counts[0]
        doc: "[seed] section 0, f32[3], stride 12, at 0x80 then zero pad to 16"
      tets:
        pos: header.section_ptrs[1]
        type: tet
        repeat: expr
        repeat-expr: header.counts[1]
        doc: "[seed] section 1, stride 96"
      faces:
        pos: header.section_ptrs[2]
        type: face
        repeat: expr
        repeat-expr: header.counts[2]
        doc: "[seed] section 2, stride 48, followed by two all-zero 48-byte sentinel records not counted"
      face_sentinels:
        pos: header.section_ptrs[2] + 48 * header.counts[2]
        size: 96
        doc: "[seed] two all-zero face records after section 2"
      cells:
        pos: header.section_ptrs[3]
        type: cell
        repeat: expr
        repeat-expr: header.counts[3]
        doc: "[seed] section 3, one 8-byte record per grid cell, index (iz*ny + iy)*nx + ix"
      items:
        pos: header.section_ptrs[4]
        type: item
        repeat: expr
        repeat-expr: header.counts[4]
        doc: "[seed] section 4, one 32-byte record per occupied cell, in cell order"
      refs:
        pos: header.section_ptrs[5]
        type: ref
        repeat: expr
        repeat-expr: header.counts[5]
        doc: "[seed] section 5, u32 pointers to section-1 records; the data area ends at its 16-aligned end [inferred]"
  data_header:
    doc: 0x80 bytes [seed]
    seq:
      - id: bbox_min
        type: f4
        repeat: expr
        repeat-expr: 4
        doc: "[seed] x, y, z, w; w = 1.0"
      - id: bbox_max
        type: f4
        repeat: expr
        repeat-expr: 4
        doc: "[seed] x, y, z, w; w = 1.0"
      - id: extent
        type: f4
        repeat: expr
        repeat-expr: 3
        doc: "[seed] max - min; extent == cell_size * dims exactly"
      - id: extent_w
        type: u4
        doc: "[unknown, written 0]"
      - id: cell_size
        type: f4
        repeat: expr
        repeat-expr: 3
        doc: "[seed]"
      - id: cell_size_w
        type: u4
        doc: "[unknown, written 0]"
      - id: dims
        type: u4
        repeat: expr
        repeat-expr: 3
        doc: "[seed] grid dims nx, ny, nz; counts[3] == nx*ny*nz"
      - id: dims_w
        type: u4
        doc: "[unknown, written 0]"
      - id: counts
        type: u2
        repeat: expr
        repeat-expr: 6
        doc: "[seed] record count of sections 0..5 (u16: at most 65535 each)"
      - id: reserved_5c
        type: u4
        doc: "[unknown, written 0]"
      - id: section_ptrs
        type: u4
        repeat: expr
        repeat-expr: 6
        doc: "[seed] data-relative offsets of sections 0..5, all six listed in POF0; section 0 at 0x80"
      - id: reserved_78
        type: u4
        repeat: expr
        repeat-expr: 2
        doc: "[unknown, written 0]"
  portal_pair:
    seq:
      - id: cost
        type: f4
        doc: "[inferred] cost of crossing from face slot i to face slot j; positive"
      - id: aux
        type: f4
        doc: "[inferred] non-negative; builder writes 0.0 when either face is a boundary face, else cost"
  tet:
    doc: 96 bytes
    seq:
      - id: centre
        type: vec3
        doc: "[seed] a position (sphere test); builder writes the vertex mean [inferred]"
      - id: radius
        type: f4
        doc: "[seed] local scale; builder writes the largest centre-to-vertex distance [inferred]"
      - id: verts
        type: u2
        repeat: expr
        repeat-expr: 4
        doc: "[inferred] vertex indices into section 0"
      - id: faces
        type: u2
        repeat: expr
        repeat-expr: 4
        doc: "[seed] face indices into section 2, slots 0-3; builder puts the face opposite vertex k in slot k [inferred]"
      - id: portal
        type: portal_pair
        repeat: expr
        repeat-expr: 6
        doc: "[inferred] one (cost, aux) pair per pair of face slots, order (0,1) (0,2) (0,3) (1,2) (1,3) (2,3)"
      - id: field_a
        type: u4
        doc: "[unknown, written 0] small field A"
      - id: field_b
        type: u4
        doc: "[unknown, written 0] small field B"
      - id: zero
        type: u4
        repeat: expr
        repeat-expr: 2
        doc: "[seed: ~100 % zero; kept]"
  face:
    doc: 48 bytes
    seq:
      - id: normal
        type: vec3
        doc: "[seed] unit normal; builder orients it out of tetrahedron A"
      - id: d
        type: f4
        doc: "[seed] plane offset: n.p + d = 0"
      - id: point
        type: vec3
        doc: "[seed] a point on the plane; builder writes the face centroid"
      - id: w
        type: f4
        doc: "[seed] 1.0"
      - id: own
        type: u4
        doc: "[seed] own index, == record index"
      - id: tet_a
        type: u4
        doc: "[seed] tetrahedron A, the first one to list the face"
      - id: tet_b
        type: u4
        doc: "[inferred] tetrahedron B, 0xFFFFFFFF when the face is on the boundary"
      - id: slot_a
        type: u1
        doc: "[seed] this face is tet[A].faces[slot_a]"
      - id: slot_b
        type: u1
        doc: "[inferred] this face is tet[B].faces[slot_b]; 0xFF on the boundary"
      - id: zero
        type: u2
        doc: "[inferred] zero"
    instances:
      is_boundary:
        value: tet_b == 0xffffffff
  cell:
    doc: 8 bytes, one per grid cell
    seq:
      - id: count
        type: u4
        doc: "[seed] item count, 0 or 1 (never more than 1)"
      - id: item_ptr
        type: u4
        doc: "[seed] data-relative pointer to a section-4 record; in POF0 exactly when the cell is occupied, 0 otherwise"
    instances:
      item:
        pos: item_ptr
        type: item
        if: item_ptr != 0
      item_index:
        value: (item_ptr - _parent.header.section_ptrs[4]) / 32
        if: item_ptr != 0
  item:
    doc: 32 bytes, one per occupied cell, in cell order
    seq:
      - id: unknown
        type: f4
        repeat: expr
        repeat-expr: 4
        doc: "[unknown] builder writes the cell centre x, y, z and the cell's full diagonal"
      - id: n
        type: u4
        doc: "[seed] number of references, >= 1"
      - id: refs_ptr
        type: u4
        doc: "[seed] data-relative pointer into section 5, in POF0; item[i].refs == sec5 + 4 * sum of earlier n"
      - id: cell_index
        type: u4
        doc: "[unknown, small] builder writes the linear cell index"
      - id: unknown2
        type: u4
        doc: "[unknown, small] builder writes 0"
    instances:
      refs:
        pos: refs_ptr
        type: ref
        repeat: expr
        repeat-expr: n
  ref:
    doc: 4 bytes
    seq:
      - id: tet_ptr
        type: u4
        doc: "[seed] data-relative pointer to a section-1 record; all on 96-byte boundaries, all in POF0"
    instances:
      tet_index:
        value: (tet_ptr - _root.data.header.section_ptrs[1]) / 96
