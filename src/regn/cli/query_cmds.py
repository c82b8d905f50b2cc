"""``regn locate | nearest | clearance | path | paths | field | raycast |
raycasts``: the navigation queries."""

from __future__ import annotations

import sys

from ..errors import RegnError
from ..inputs.numbers import number, whole
from . import _queries as Q
from ._common import (JsonList, add_max_tiles, coordinate, iter_points, load_mesh,
                      print_json, read_points)
from ._progress import Progress


def add_parser(subparsers, name, help_text):
    p = subparsers.add_parser(name, help=help_text, description=help_text)
    p.add_argument("file", help="REGN file")
    if name in ("locate", "nearest", "clearance"):
        p.add_argument("--points", help=".csv/.npy/.txt file of points (default: "
                       "'x y z' lines on stdin)")
    elif name == "raycasts":
        p.add_argument("--segments", help=".csv/.npy/.txt file of segments, six numbers "
                       "a row (default: 'x0 y0 z0 x1 y1 z1' lines on stdin)")
    elif name == "field":
        for c in ("x", "y", "z"):
            p.add_argument(c, type=coordinate, help="the goal")
        p.add_argument("--points", help=".csv/.npy/.txt file of positions: print each "
                       "one's cost and next waypoint instead of every tetrahedron's")
    elif name != "paths":
        for c in ("x0", "y0", "z0", "x1", "y1", "z1"):
            p.add_argument(c, type=coordinate)
    if name == "clearance":
        p.add_argument("--wall", action="store_true",
                       help="also the nearest wall: its closest point, face row and unit "
                            "normal out of the volume")
    if name in ("path", "paths"):
        p.add_argument("--no-smooth", action="store_true",
                       help="portal-centroid polyline instead of the shortest one")
        p.add_argument("--partial", action="store_true",
                       help="when the goal cannot be reached (in a rock, cut off), the path "
                            "to the reachable point nearest it, status 'partial'")
    if name in ("path", "paths", "field"):
        Q.add_path_options(p)
    if name == "paths":
        p.add_argument("--workers", type=whole, metavar="N",
                       help="threads searching at once (default: one per core)")
    if name == "path":
        p.add_argument("-o", "--output", metavar="OUT",
                       help="also write the polyline, with each point's length along "
                            "the path and clearance: .vtp (ParaView), .csv, .obj "
                            "(Blender), .ply or .json")
        p.add_argument("--units", choices=("m", "km"), default="m",
                       help="length unit of the -o file (default m)")
        p.add_argument("--force", action="store_true", help="overwrite an existing OUT")
    if name in ("nearest", "path", "paths", "raycast", "raycasts"):
        p.add_argument("--radius", type=number, default=0.0, metavar="R",
                       help={"nearest": "the nearest position where a sphere of R metres fits",
                             "path": "a path for a sphere of R metres: it never comes "
                                     "closer than R to a wall",
                             "paths": "paths for a sphere of R metres: they never come "
                                      "closer than R to a wall",
                             "raycast": "sweep a sphere of R metres instead of a point",
                             "raycasts": "sweep a sphere of R metres instead of a point"}[name])
    add_max_tiles(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func={"locate": _locate, "nearest": _nearest, "clearance": _clearance,
                         "path": _path, "paths": _paths, "field": _field,
                         "raycast": _raycast, "raycasts": _raycasts}[name])
    return p


def _streamed(args, source, answer, text_lines, json_items, width=3) -> int:
    """Answer the rows of ``source`` a block at a time, writing each block's
    answers before reading the next, so memory does not grow with the input:
    ``answer(mesh, rows)`` -> result; ``text_lines(result)`` -> str;
    ``json_items(result)`` -> list for the JSON list."""
    mesh = load_mesh(args.file, args.max_tiles)
    out = JsonList() if args.json else None
    try:
        for rows in iter_points(source, width=width):
            result = answer(mesh, rows)
            if out is None:
                sys.stdout.write(text_lines(result))
            else:
                out.extend(json_items(result))
    except (RegnError, OSError, ValueError) as e:
        if out is not None and out.started:   # answers already out: end the list
            out.fail(e)
        raise
    if out is not None:
        out.close()
    return 0


def _locate(args) -> int:
    return _streamed(args, args.points, lambda mesh, p: mesh.locate(p),
                     lambda t: "".join(f"{v}\n" for v in t.tolist()), Q.locate_doc)


def _nearest(args) -> int:
    return _streamed(
        args, args.points, lambda mesh, p: mesh.nearest(p, radius=args.radius),
        lambda r: "".join(f"{p[0]:.6f} {p[1]:.6f} {p[2]:.6f} {t}\n"
                          for p, t in zip(r.points.tolist(), r.tets.tolist())),
        Q.nearest_doc)


def _clearance(args) -> int:
    if args.wall:
        return _streamed(args, args.points, lambda mesh, p: mesh.nearest_wall(p),
                         Q.wall_lines, Q.wall_doc)
    return _streamed(args, args.points, lambda mesh, p: mesh.distance_to_wall(p),
                     lambda d: "".join(f"{v:.6f}\n" for v in d.tolist()), Q.clearance_doc)


def _path(args) -> int:
    if args.output is not None:                 # fail before the search
        _check_path_output(args)
    doc = _ask_warm(args, "path", start=[args.x0, args.y0, args.z0],
                    goal=[args.x1, args.y1, args.z1], smooth=not args.no_smooth,
                    partial=args.partial)
    served = doc is not None
    wrote = None
    if not served:
        mesh = load_mesh(args.file, args.max_tiles)
        if getattr(mesh, "is_world", False):     # a sphere's clearances: seconds
            mesh.progress = Progress.for_args(args)
        try:
            r = mesh.find_path((args.x0, args.y0, args.z0), (args.x1, args.y1, args.z1),
                               smooth=not args.no_smooth, radius=args.radius,
                               partial=args.partial, **Q.path_options_of_args(mesh, args))
        finally:
            if getattr(mesh, "progress", None) is not None:
                mesh.progress.close()
        if args.output is not None:
            wrote = _write_path(args, mesh, r)
        doc = Q.path_doc(r)
    if args.output is not None:                 # the file holds the points: a summary
        doc = _path_summary(doc, wrote)
    if args.json:
        print_json(doc, plain=served)
    else:
        print(f"status {doc['status']}")
        if doc["found"]:
            n_tets = doc["n_tets"] if "n_tets" in doc else len(doc["tets"])
            print(f"cost {doc['cost']:.6f}\nlength {doc['length']:.6f}\ntets {n_tets}")
        if "output" in doc:
            if doc["output"] is not None:
                print(f"points {doc['n_points']}\nwrote {doc['output']}: {doc['bytes']} "
                      f"bytes, coordinates in {doc['units']}")
        else:
            for p in doc["points"]:
                print(f"{p[0]:.6f} {p[1]:.6f} {p[2]:.6f}")
    if not served:
        _keep_warm(args)
    return 0 if doc["found"] else 1


def _path_summary(doc, wrote) -> dict:
    """``regn path -o OUT``'s answer: the path's figures without its points
    (OUT holds them) and what was written (``output`` None: no path, nothing
    written)."""
    summary = {k: doc[k] for k in ("found", "status", "cost", "length")}
    summary.update(n_points=len(doc["points"]), n_tets=len(doc["tets"]), output=None)
    if wrote is not None:
        summary.update(wrote)
    return summary


def _servable(args) -> bool:
    """Whether a warm service could answer the query: not when it needs what
    only this process has (an -o file to write, .npy cost factors or
    exclusions to read, a world held with other --max-tiles)."""
    return getattr(args, "output", None) is None and getattr(args, "cost_scale", None) \
        is None and getattr(args, "exclude", None) is None \
        and getattr(args, "max_tiles", None) is None


def _ask_warm(args, query, **fields):
    """The answer of the map's warm service (:mod:`.warm`), or None: none
    runs, or the query is not :func:`_servable`."""
    if not _servable(args):
        return None
    from . import warm
    fields["radius"] = args.radius
    for key in ("block_sphere", "block_box", "block_scale"):
        value = getattr(args, key, None)
        if value:
            fields[key] = value
    return warm.ask(args.file, {"id": 0, "query": query, **fields})


def _keep_warm(args):
    """After answering a servable query in this process: a map asked so
    twice in a row is kept warm for the next (:func:`.warm.after_cold_query`)."""
    if not _servable(args):
        return
    from . import warm
    sys.stdout.flush()                  # the answer first; then start the service
    tty = sys.stderr.isatty() and not getattr(args, "json", False)
    warm.after_cold_query(args.file, say=(lambda text: print(f"regn: {text}", file=sys.stderr))
                          if tty else None)


def _write_path(args, mesh, r):
    """Write the path to ``-o OUT``: what was written (a dict), or None (no
    path: nothing written, said on stderr)."""
    if not r.found:
        print(f"regn: no path ({r.status}): {args.output} not written", file=sys.stderr)
        return None
    import os

    from ..export.polyline import write_path
    write_path(mesh, r, args.output, units=args.units)
    return {"output": args.output, "units": args.units,
            "bytes": os.path.getsize(args.output)}


def _check_path_output(args):
    from ..errors import ExportError
    from ..export import PATH_EXTS, extension
    from ._common import check_output
    if extension(args.output) not in PATH_EXTS:
        raise ExportError(f"{args.output}: a path is written as one of "
                          f"{' '.join(PATH_EXTS)}")
    check_output(args.output, [args.file, args.cost_scale, args.exclude], args.force)


def _paths(args) -> int:
    """find_paths on every 'x0 y0 z0 x1 y1 z1' line of stdin, a block of
    lines at a time: one JSON document or one text line per query, in input
    order, each block's before the next is read."""
    mesh = load_mesh(args.file, args.max_tiles)
    options = Q.path_options_of_args(mesh, args)
    bar, done, read, before = Progress.for_args(args), 0, _stdin_share(), 0.0
    try:
        for seg in iter_points(None, width=6):
            after = read()                  # the block is read: stdin's offset is past it
            for k in range(0, len(seg), PATHS_SHOWN_EVERY):
                part = seg[k:k + PATHS_SHOWN_EVERY]
                r = mesh.find_paths(part[:, :3], part[:, 3:], smooth=not args.no_smooth,
                                    workers=args.workers, radius=args.radius,
                                    partial=args.partial, **options)
                if args.json:
                    for doc in Q.paths_doc(r):
                        print_json(doc)
                else:
                    sys.stdout.write("".join(_path_line(p) for p in r))
                sys.stdout.flush()
                done += len(part)
                bar(f"{done} paths", None if after is None else
                    before + (after - before) * (k + len(part)) / len(seg))
            before = after
    finally:
        bar.close()
    return 0


#: ``regn paths`` asks this many queries at once between two progress updates
PATHS_SHOWN_EVERY = 1024


def _stdin_share():
    """A callable giving the share of stdin read so far when stdin is a
    regular file (``< FILE``), else one giving None (a pipe: no total)."""
    import os
    import stat
    try:
        fd = sys.stdin.fileno()
        size = os.fstat(fd).st_size if stat.S_ISREG(os.fstat(fd).st_mode) else 0
    except (OSError, ValueError, AttributeError):
        size = 0
    if size <= 0:
        return lambda: None
    return lambda: min(os.lseek(fd, 0, os.SEEK_CUR) / size, 1.0)


def _path_line(p) -> str:
    """status cost length, then x y z of every point, on one line."""
    nums = [p.cost, p.length] if p.found else [float("nan")] * 2
    return " ".join([p.status] + [f"{v:.6f}" for v in nums + p.points.ravel().tolist()]) + "\n"


def _field(args) -> int:
    mesh = load_mesh(args.file, args.max_tiles)
    if args.points is None and getattr(mesh, "is_world", False):
        raise RegnError(f"field: {args.file} is a world: every tetrahedron's cost is not "
                        "available for worlds; ask for points with --points FILE")
    field = mesh.cost_field((args.x, args.y, args.z), **Q.path_options_of_args(mesh, args))
    points = read_points(args.points) if args.points is not None else None
    if args.json:
        print_json(Q.field_doc(field, points))
        return 0 if field.status == "ok" else 1
    print(f"status {field.status}\ngoal_tet {field.goal_tet}")
    if points is None:              # one line a tetrahedron: cost next_portal
        sys.stdout.write("".join(f"{c:.6f} {int(f)}\n" for c, f in
                                 zip(field.cost.tolist(), field.next_portal.tolist())))
    else:                           # one line a point: cost, next waypoint
        sys.stdout.write("".join(f"{c:.6f} {w[0]:.6f} {w[1]:.6f} {w[2]:.6f}\n" for c, w in
                                 zip(field.cost_at(points).tolist(),
                                     field.next_waypoint(points).tolist())))
    return 0 if field.status == "ok" else 1


def _raycast(args) -> int:
    doc = _ask_warm(args, "raycast", a=[args.x0, args.y0, args.z0],
                    b=[args.x1, args.y1, args.z1])
    served = doc is not None
    if not served:
        mesh = load_mesh(args.file, args.max_tiles)
        doc = Q.raycast_doc(mesh.raycast((args.x0, args.y0, args.z0),
                                         (args.x1, args.y1, args.z1), radius=args.radius))
    if args.json:
        print_json(doc, plain=served)
    else:
        print(f"status {doc['status']}")
        if doc["status"] == "hit":
            p, n = doc["point"], doc["normal"]
            print(f"face {doc['face']}\nt {doc['t']:.9f}\n"
                  f"point {p[0]:.6f} {p[1]:.6f} {p[2]:.6f}\n"
                  f"normal {n[0]:.6f} {n[1]:.6f} {n[2]:.6f}")
        print(f"tets {len(doc['tets'])}")
    if not served:
        _keep_warm(args)
    return 0 if doc["clear"] else 1


def _raycasts(args) -> int:
    def text_lines(r):
        # one line a segment: status face t point(3) normal(3)
        return "".join(
            f"{st} {f} {t:.9f} {p[0]:.6f} {p[1]:.6f} {p[2]:.6f} "
            f"{n[0]:.6f} {n[1]:.6f} {n[2]:.6f}\n"
            for st, f, t, p, n in zip(r.status.tolist(), r.face.tolist(), r.t.tolist(),
                                      r.point.tolist(), r.normal.tolist()))

    return _streamed(args, args.segments,
                     lambda mesh, s: mesh.raycast_many(s[:, :3], s[:, 3:], radius=args.radius),
                     text_lines, Q.raycasts_doc, width=6)
