"""``regn scan BLOB`` (find POF0 objects) and ``regn chunk FILE[@OFFSET]`` (infer a layout)."""

from __future__ import annotations

import mmap
import os
import stat
import sys
import tempfile

from ..errors import FormatError, RegnError


def add_parser(subparsers, name, help_text):
    if name == "scan":
        p = subparsers.add_parser(name, help=help_text, description=(
            "Find every POF0-relocated object in any file by its chunk structure alone: "
            "a 4-character tag, a size that puts 'POF0' exactly where it says (either byte "
            "order) and a POF0 table that decodes with every word inside the data area."))
        p.add_argument("blob", help="any file (a pak, a memory dump, ...)")
        p.add_argument("--json", action="store_true", help="one JSON list of objects")
        p.add_argument("--extract", metavar="DIR",
                       help="write each object to DIR/{offset:08x}.{TAG}.{rgn|col|bin} "
                       "(never overwrites)")
        p.add_argument("--no-validate", action="store_true",
                       help="do not check REGN objects with verify/loads")
        p.set_defaults(func=run_scan)
    else:
        p = subparsers.add_parser(name, help=help_text, description=(
            "Infer the record layout of a POF0 chunk: the pointer map, regions of pointer "
            "targets, each region's record stride with its evidence, and a per-word census. "
            "FILE@OFFSET reads the object at OFFSET (decimal or 0x...) of a blob."))
        p.add_argument("target", metavar="FILE[@OFFSET]")
        p.add_argument("--json", action="store_true", help="the full inference as JSON")
        p.add_argument("--pointers", action="store_true",
                       help="list every pointer in the text output")
        p.set_defaults(func=run_chunk)
    return p


#: A pipe or device is copied to a temporary file first, up to this many bytes.
STREAM_LIMIT = 1 << 30


def _open_blob(path):
    """The file ``path`` mapped read-only; a pipe or device (``/dev/stdin``)
    is copied to an unnamed temporary file first, refused past
    :data:`STREAM_LIMIT` bytes."""
    from .._atomic import note_input
    with open(path, "rb") as fh:
        note_input(path)
        if stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return _map(fh)
        with tempfile.TemporaryFile() as copy:
            while True:
                block = fh.read(1 << 20)
                if not block:
                    break
                if copy.tell() + len(block) > STREAM_LIMIT:
                    raise RegnError(f"{path}: not a regular file, and longer than "
                                    f"{STREAM_LIMIT} bytes: save it to a file first")
                copy.write(block)
            copy.flush()
            return _map(copy)


def _map(fh):
    if os.fstat(fh.fileno()).st_size == 0:
        return b""
    return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)


def run_scan(args) -> int:
    from .._atomic import atomic_write
    from ..scan.finder import scan, tty_progress
    buf = _open_blob(args.blob)
    show = None if args.json else tty_progress(sys.stderr)     # --json: stderr stays quiet
    found = scan(buf, validate=not args.no_validate, progress=show)
    written = []
    if args.extract:
        os.makedirs(args.extract, exist_ok=True)
        for f in found:
            name = f"{f.offset:08x}.{f.tag.decode('latin-1')}.{f.extension}"
            path = os.path.join(args.extract, name)
            try:
                atomic_write(path, bytes(buf[f.offset:f.end]), overwrite=False)
            except FileExistsError:
                raise RegnError(f"{path} exists (refusing to overwrite it)") from None
            written.append(path)
    if args.json:
        from ._common import print_json
        out = []
        for i, f in enumerate(found):
            d = f.to_json()
            if args.extract:
                d["path"] = written[i]
            out.append(d)
        print_json(out)
        return 0
    if not found:
        print(f"{args.blob}: no POF0 objects")
        return 0
    print(f"{'offset':>10}  {'tag':4}  {'size':>10}  {'data':>10}  order   pof0  regn")
    for f in found:
        v = "" if f.valid_regn is None else ("valid" if f.valid_regn else "INVALID")
        print(f"{f.offset:#010x}  {f.tag.decode('latin-1'):4}  {f.size:>10}  {f.data_size:>10}  "
              f"{'big' if f.byte_order == '>' else 'little':6}  {f.pof0_dialect}-byte  {v}")
    print(f"{len(found)} object(s)" + (f", written to {args.extract}" if args.extract else ""))
    return 0


def _split_target(target):
    path, offset = target, 0
    if "@" in target and not os.path.exists(target):
        path, _, off = target.rpartition("@")
        try:
            offset = int(off, 0)
        except ValueError:
            raise RegnError(f"bad offset {off!r} (decimal or 0x...)") from None
    return path, offset


def run_chunk(args) -> int:
    from ..scan.chunkinfo import infer_object
    path, offset = _split_target(args.target)
    buf = _open_blob(path)
    if not 0 <= offset < len(buf):
        raise FormatError(f"offset {offset:#x} is not inside the {len(buf)}-byte file",
                          path=path)
    try:
        info = infer_object(buf, offset)
    except FormatError as e:
        raise (e if e.path else e.with_path(path)) from None
    if args.json:
        from ._common import print_json
        print_json(info)
        return 0
    print(f"{info['tag']} at {offset:#x}: {info['data_size']:#x}-byte data area, "
          f"{info['byte_order']}-endian, POF0 {info['pof0_dialect']}-byte dialect")
    print(f"{info['n_pointers']} pointers ({info['n_null']} null) to {info['n_targets']} "
          f"distinct targets; region starts from {info['region_starts_from']}")
    if args.pointers:
        for p in info["pointers"]:
            print(f"  {p['at']:#08x} -> {p['to']:#08x}")
    for r in info["regions"]:
        ev = r["evidence"]
        print(f"\nregion {r['start']:#08x}..{r['end']:#08x}  stride {r['stride']}  "
              f"count {r['count']}  ({r['basis']})")
        extra = []
        if "targets_on_boundaries" in ev:
            extra.append(f"targets on record boundaries {ev['targets_on_boundaries']}/"
                         f"{ev['targets']}")
        if "pointer_fields" in ev:
            extra.append("pointer fields at +" + ", +".join(
                f"{o:#x} ({c})" for o, c in ev["pointer_fields"].items()))
        for key, word in (("pointed_from", "pointed at from"), ("points_to", "points into")):
            if ev.get(key):
                extra.append(f"{word} " + ", ".join(f"{a:#x} ({c})" for a, c in ev[key].items()))
        if extra:
            print("  " + "; ".join(extra))
        if len(r["census"]) <= 32:
            for c in r["census"]:
                rng = (f"float {c['float_min']:.4g}..{c['float_max']:.4g}"
                       if "float_min" in c else f"int {c['int_min']}..{c['int_max']}")
                print(f"  +{c['offset']:#04x}  zero {c['zero']:5.1%}  int {c['int_like']:5.1%}  "
                      f"float {c['float']:5.1%}  {rng}" + (f"  {c['note']}" if "note" in c else ""))
    return 0
