"""``regn info``, ``regn dump`` and ``regn rewrite``: the format-level commands."""

from __future__ import annotations

import os
import sys

import numpy as np

from ..errors import RegnError
from ..inputs.numbers import whole
from ..units import unit_for_box
from ._common import add_json_option, load_mesh, print_json


def add_parser(sub, name, help_text):
    p = sub.add_parser(name, help=help_text, description=help_text)
    if name == "info":
        p.add_argument("file")
        p.add_argument("--json", action="store_true", help="print the summary as JSON")
        p.set_defaults(func=run_info)
    elif name == "dump":
        p.add_argument("file")
        p.add_argument("--json", action="store_true",
                       help="every field as JSON (schema: docs/format.md#dump)")
        p.set_defaults(func=run_dump)
    else:
        p.add_argument("input")
        p.add_argument("output")
        p.add_argument("--in-place", action="store_true",
                       help="allow OUTPUT to be INPUT (replaced atomically)")
        p.add_argument("--force", action="store_true",
                       help="overwrite an existing OUTPUT")
        p.add_argument("--byte-order", choices=("big", "little"),
                       help="write in this byte order (default: as read)")
        p.add_argument("--pof0-dialect", type=whole, choices=(3, 4),
                       help="POF0 long-entry form (default: as read)")
        add_json_option(p, "what was written")
        p.set_defaults(func=run_rewrite)


def summary(mesh) -> dict:
    """The figures ``regn info`` shows, as a dict."""
    counts = dict(zip(("vertices", "tets", "faces", "cells", "items", "refs"),
                      mesh.counts))
    occupied = int(np.count_nonzero(mesh.cell_item >= 0))
    per_cell = mesh.cell_ref_count
    parts = mesh.parts
    size = len(mesh.dumps()) if parts is None else parts.frame.end - parts.frame.start
    sections = []
    offs = parts.section_offsets if parts else mesh._canonical_offsets()
    from ..format.layout import SECTION_NAMES, STRIDES
    for k, name in enumerate(SECTION_NAMES):
        sections.append({"section": k, "name": name, "offset": int(offs[k]),
                         "stride": STRIDES[k], "count": int(mesh.counts[k]),
                         "bytes": int(mesh.counts[k] * STRIDES[k])})
    return {
        "path": mesh.path,
        "byte_order": "big" if mesh.byte_order == ">" else "little",
        "pof0_dialect": mesh.pof0_dialect,
        "object_bytes": int(size),
        "counts": counts,
        "bbox_min": mesh.bbox_min.tolist(), "bbox_max": mesh.bbox_max.tolist(),
        "cell_size": mesh.cell_size.tolist(), "dims": list(mesh.dims),
        "occupied_cells": occupied,
        "refs_per_occupied_cell": {
            "min": int(per_cell[per_cell > 0].min()) if occupied else 0,
            "mean": float(per_cell[per_cell > 0].mean()) if occupied else 0.0,
            "max": int(per_cell.max()) if len(per_cell) else 0},
        "boundary_faces": int(len(mesh.boundary_faces)),
        "volume": float(mesh.tet_volumes.sum()),
        "sections": sections,
        "trailer_bytes": len(mesh.trailer),
    }


def run_info(args) -> int:
    if args.file.lower().endswith(".json"):       # a world's manifest
        from .world_cmds import world_info
        return world_info(args)
    mesh = load_mesh(args.file)
    s = summary(mesh)
    if args.json:
        print_json(s)
        return 0
    c = s["counts"]
    lo, hi = s["bbox_min"], s["bbox_max"]
    box = np.asarray(hi) - np.asarray(lo)
    cells = int(np.prod(s["dims"]))
    print(f"{args.file}: REGN, {s['object_bytes']} bytes, {s['byte_order']}-endian, "
          f"POF0 {s['pof0_dialect']}-byte dialect")
    print(f"  {c['vertices']} vertices, {c['tets']} tetrahedra, {c['faces']} faces "
          f"({s['boundary_faces']} on the boundary)")
    unit = unit_for_box(lo, hi)         # metres for a room, km for a field
    print(f"  bbox {fmt3(lo)} .. {fmt3(hi)}  ({fmt3(unit.scale(box))} {unit.name})")
    print(f"  grid {'x'.join(map(str, s['dims']))} cells of "
          f"{fmt3(unit.scale(s['cell_size']))} {unit.name}; "
          f"{s['occupied_cells']} of {cells} occupied; refs per occupied cell "
          f"{s['refs_per_occupied_cell']['min']}..{s['refs_per_occupied_cell']['max']} "
          f"(mean {s['refs_per_occupied_cell']['mean']:.1f}), {c['refs']} refs")
    free = s["volume"] / float(np.prod(box)) if np.prod(box) > 0 else 0.0
    print(f"  navigable volume {unit.volume(s['volume'])} ({100 * free:.1f} % of the box)")
    print("  sections:")
    for sec in s["sections"]:
        print(f"    {sec['section']} {sec['name']:<9} at {sec['offset']:#08x}  "
              f"{sec['count']:>6} x {sec['stride']:>2} = {sec['bytes']} bytes")
    if s["trailer_bytes"]:
        print(f"  {s['trailer_bytes']} bytes after the POF0 table (kept)")
    return 0


def fmt3(v):
    return "(" + ", ".join(f"{x:g}" for x in v) + ")"


def dump_dict(mesh) -> dict:
    """Every field of every record, by section (the ``regn dump --json`` schema)."""
    from ..format.layout import SECTION_NAMES, display_dtype

    def records(name, arr):
        # [seed] f32 words kept as u32 bits are shown as floats, as the format says
        arr = arr.view(display_dtype(name, mesh.byte_order))
        return {field: arr[field] for field in arr.dtype.names}

    hdr = {name: np.asarray(mesh.header[name]).tolist() for name in mesh.header.dtype.names}
    chunk = mesh.chunk_header
    return {
        "format": "regn-dump/1",
        "path": mesh.path,
        "byte_order": "big" if mesh.byte_order == ">" else "little",
        "pof0_dialect": mesh.pof0_dialect,
        "chunk": None if chunk is None else {
            "flags": int(chunk["flags"]), "reserved": np.asarray(chunk["reserved"]).tolist()},
        "header": hdr,
        "sections": {name: records(name, mesh.sections[name]) for name in SECTION_NAMES},
        "pointers": {"cell_item": mesh.cell_item,
                     "item_ref_start": mesh.item_ref_start,
                     "ref_tet": mesh.ref_tet},
        "trailer_hex": bytes(mesh.trailer).hex(),
    }


def run_dump(args) -> int:
    mesh = load_mesh(args.file)
    d = dump_dict(mesh)
    if args.json:
        print_json(d)
        return 0
    out = sys.stdout
    out.write(f"# {args.file}: {d['byte_order']}-endian, POF0 {d['pof0_dialect']}-byte dialect\n")
    out.write("[header]\n")
    for k, v in d["header"].items():
        out.write(f"  {k} = {v}\n")
    for name, fields in d["sections"].items():
        names = list(fields)
        n = len(fields[names[0]]) if names else 0
        out.write(f"[{name}] {n} records: {', '.join(names)}\n")
        for i in range(n):
            out.write(f"  {i}: " + "  ".join(f"{f}={fields[f][i]}" for f in names) + "\n")
    return 0


def run_rewrite(args) -> int:
    from .._atomic import check_destination, forget_input
    from ..io import save
    same = os.path.exists(args.output) and os.path.samefile(args.input, args.output)
    if same and not args.in_place:
        raise RegnError(f"{args.output}: is the input file; pass --in-place to replace it")
    if not same:                        # fail before reading: an existing file needs --force
        try:
            check_destination(args.output, overwrite=args.force)
        except FileExistsError:
            raise RegnError(f"{args.output}: exists; pass --force to overwrite it") from None
        except NotADirectoryError as e:
            raise RegnError(f"{args.output}: cannot write: {e}") from None
    mesh = load_mesh(args.input)
    if same:
        forget_input(args.input)        # --in-place: replacing it is the point
    order = {"big": ">", "little": "<", None: None}[args.byte_order]
    save(mesh, args.output, overwrite=args.force or same, byte_order=order,
         pof0_dialect=args.pof0_dialect)
    if args.json:               # (silent otherwise: OUTPUT may be /dev/stdout)
        print_json({"output": args.output, "bytes": os.path.getsize(args.output),
                    "byte_order": "big" if (order or mesh.byte_order) == ">" else "little",
                    "pof0_dialect": args.pof0_dialect or mesh.pof0_dialect})
    return 0
