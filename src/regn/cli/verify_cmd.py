"""``regn verify FILE... [--json] [--strict]``: every check of the spec, per file.

Exit 0 when every file passes, 1 when any fails, 2 when any file cannot be
read as REGN at all (that file gets one ``regn: FILE: offset 0x…: what`` line
on stderr; the others are still checked). A world's manifest counts as
unreadable when it, or any of its tiles, cannot be read (missing, cut short,
not a REGN: one ``regn:`` line a tile, naming it); a tile that reads but is
not the manifest's or fails a check fails the world.
"""

from __future__ import annotations

import sys

from ..errors import FormatError, RegnError
from ._common import print_json


def add_parser(sub, name, help_text):
    p = sub.add_parser(
        name, help=help_text,
        description="Run every check of the REGN spec on each FILE. [seed] checks "
        "are always required; [inferred] ones only with --strict; info rows are "
        "measured, never required (the quality line counts the boundary's pinches). Exit 0 all pass, 1 any fails, 2 any file "
        "unreadable.")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--json", action="store_true",
                   help='print {"files": [report, ...]} instead of tables')
    p.add_argument("--strict", action="store_true",
                   help="require the [inferred] checks too")
    p.set_defaults(func=run)


def _table(report, out):
    rows = [(c.name, c.kind, c.status.upper() if c.status == "fail" else c.status,
             f"{c.passed}/{c.total}", c.detail) for c in report.checks]
    head = ("check", "kind", "status", "passed", "detail")
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(4)]
    dialect = report.pof0_dialect if report.pof0_dialect is not None else "?"
    verdict = "ok" if report.ok else "FAIL"
    print(f"{report.path}: {verdict}  (byte order {report.byte_order}, POF0 dialect "
          f"{dialect}{'; ' + report.pof0_note if report.pof0_note else ''}; round trip "
          f"{'identical' if report.roundtrip_identical else 'differs'}"
          f"{'; strict' if report.strict else ''})", file=out)
    if report.quality:
        counts = ", ".join(f"{q.count} {what} (of {q.total} {q.of})"
                           for what, q in report.quality.items())
        print(f"  quality (measured, never required): {counts}", file=out)
    for r in [head] + rows:
        print("  " + "  ".join(r[i].ljust(widths[i]) for i in range(4)) + "  " + r[4],
              file=out)


def _world(path, args):
    """``(ok or None when it or a tile is unreadable, its JSON document)`` of
    a world's manifest, its lines printed (regn.world.verify): progress "tile
    k of n" at a terminal, one ``regn:`` line on stderr per unreadable tile."""
    from ..world.verify import verify_world
    from ._progress import Progress
    bar = Progress.for_args(args)
    try:
        report = verify_world(path, strict=args.strict, progress=bar)
    except RegnError as e:
        bar.close()
        print(f"regn: {e}", file=sys.stderr)
        return None, {"path": path, "ok": False, "error": str(e)}
    bar.close()
    unreadable = report.unreadable
    for row in unreadable:
        print(f"regn: {row['problem']}", file=sys.stderr)
    if not args.json:
        good = sum(t["ok"] for t in report.tiles)
        links = sum(lk["ok"] for lk in report.links)
        print(f"{path}: {'ok' if report.ok else 'FAIL'}  (world: {good} of "
              f"{len(report.tiles)} tiles pass{' --strict' if args.strict else ''}"
              f"{f', {len(unreadable)} unreadable' if unreadable else ''}, "
              f"{links} of {len(report.links)} links match)")
        for row in report.tiles + report.links:
            if not row["ok"] and row.get("readable", True):    # (unreadable: on stderr)
                print(f"  {row['problem']}")
        print()
    return (None if unreadable else report.ok), report.to_dict()


def run(args) -> int:
    from ..checks import verify
    from ..inputs.maps import read_map_bytes
    from ._progress import Progress
    out = sys.stdout
    results, unreadable, failed, passed = [], 0, 0, 0
    for path in args.files:
        if path.lower().endswith(".json"):          # a world's manifest
            ok, text = _world(path, args)
            results.append(text)
            if ok is None:
                unreadable += 1
            elif ok:
                passed += 1
            else:
                failed += 1
            continue
        bar = Progress.for_args(args)
        try:
            report = verify(read_map_bytes(path), strict=args.strict, path=path, progress=bar)
        except FormatError as e:
            unreadable += 1
            err = e if e.path else e.with_path(path)
            print(f"regn: {err}", file=sys.stderr)
            results.append({"path": path, "ok": False, "error": str(err)})
            continue
        except RegnError as e:            # cannot read the file at all
            unreadable += 1
            msg = str(e)
            print(f"regn: {msg}", file=sys.stderr)
            results.append({"path": path, "ok": False, "error": msg})
            continue
        finally:
            bar.close()
        if report.ok:
            passed += 1
        else:
            failed += 1
        results.append(report)
        if not args.json:
            _table(report, out)
            print(file=out)
    n = len(args.files)
    if args.json:
        print_json({"files": [r if isinstance(r, dict) else r.to_dict()
                              for r in results]})
    else:
        tail = f", {unreadable} unreadable" if unreadable else ""
        print(f"{passed} of {n} maps pass{tail}", file=out)
    if unreadable:
        return 2
    return 1 if failed else 0
