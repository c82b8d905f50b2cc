"""``regn locate | nearest | clearance | path | raycast | raycasts``: the
navigation queries."""

from __future__ import annotations

import sys

from ._common import JsonList, iter_points, load_mesh, print_json


def add_parser(subparsers, name, help_text):
    p = subparsers.add_parser(name, help=help_text, description=help_text)
    p.add_argument("file", help="REGN file")
    if name in ("locate", "nearest", "clearance"):
        p.add_argument("--points", help=".csv/.npy/.txt file of points (default: "
                       "'x y z' lines on stdin)")
    elif name == "raycasts":
        p.add_argument("--segments", help=".csv/.npy/.txt file of segments, six numbers "
                       "a row (default: 'x0 y0 z0 x1 y1 z1' lines on stdin)")
    else:
        for c in ("x0", "y0", "z0", "x1", "y1", "z1"):
            p.add_argument(c, type=float)
    if name == "path":
        p.add_argument("--no-smooth", action="store_true",
                       help="portal-centroid polyline instead of the shortest one")
        p.add_argument("--cost-scale", metavar="S.npy",
                       help="one cost factor per tetrahedron (.npy of T floats)")
        p.add_argument("--exclude", metavar="E.npy",
                       help="tetrahedra not to enter (.npy of T bools, or of indices)")
        p.add_argument("-o", "--output", metavar="OUT",
                       help="also write the polyline, with each point's length along "
                            "the path and clearance: .vtp (ParaView), .csv, .obj "
                            "(Blender), .ply or .json")
        p.add_argument("--units", choices=("m", "km"), default="m",
                       help="length unit of the -o file (default m)")
        p.add_argument("--force", action="store_true", help="overwrite an existing OUT")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func={"locate": _locate, "nearest": _nearest, "clearance": _clearance,
                         "path": _path, "raycast": _raycast, "raycasts": _raycasts}[name])
    return p


def _streamed(args, source, answer, text_lines, json_items, width=3) -> int:
    """Answer the rows of ``source`` a block at a time, writing each block's
    answers before reading the next, so memory does not grow with the input:
    ``answer(mesh, rows)`` -> result; ``text_lines(result)`` -> str;
    ``json_items(result)`` -> list for the JSON list."""
    mesh = load_mesh(args.file)
    out = JsonList() if args.json else None
    for rows in iter_points(source, width=width):
        result = answer(mesh, rows)
        if out is None:
            sys.stdout.write(text_lines(result))
        else:
            out.extend(json_items(result))
    if out is not None:
        out.close()
    return 0


def _locate(args) -> int:
    return _streamed(args, args.points, lambda mesh, p: mesh.locate(p),
                     lambda t: "".join(f"{v}\n" for v in t.tolist()), lambda t: t)


def _nearest(args) -> int:
    return _streamed(
        args, args.points, lambda mesh, p: mesh.nearest(p),
        lambda r: "".join(f"{p[0]:.6f} {p[1]:.6f} {p[2]:.6f} {t}\n"
                          for p, t in zip(r.points.tolist(), r.tets.tolist())),
        lambda r: [{"point": p, "tet": t} for p, t in zip(r.points, r.tets)])


def _clearance(args) -> int:
    return _streamed(args, args.points, lambda mesh, p: mesh.distance_to_wall(p),
                     lambda d: "".join(f"{v:.6f}\n" for v in d.tolist()), lambda d: d)


def _path(args) -> int:
    if args.output is not None:                 # fail before the search
        _check_path_output(args)
    mesh = load_mesh(args.file)
    r = mesh.find_path((args.x0, args.y0, args.z0), (args.x1, args.y1, args.z1),
                       smooth=not args.no_smooth, cost_scale=_per_tet(args.cost_scale),
                       exclude=_exclude_mask(args.exclude, mesh.n_tets))
    if args.output is not None:
        # stderr: stdout stays the query's own (parseable) output
        if r.found:
            from ..export.polyline import write_path
            t = write_path(mesh, r, args.output, units=args.units)
            print(f"wrote {args.output}: {len(t['points'])} points, length "
                  f"{t['total_length']:.6g} {args.units}", file=sys.stderr)
        else:
            print(f"regn: no path ({r.status}): {args.output} not written", file=sys.stderr)
    if args.json:
        print_json(r.to_dict())
    else:
        print(f"status {r.status}")
        if r.found:
            print(f"cost {r.cost:.6f}\nlength {r.length:.6f}\ntets {len(r.tets)}")
            for p in r.points:
                print(f"{p[0]:.6f} {p[1]:.6f} {p[2]:.6f}")
    return 0 if r.found else 1


def _check_path_output(args):
    from ..errors import ExportError
    from ..export import PATH_EXTS, extension
    from ._common import check_output
    if extension(args.output) not in PATH_EXTS:
        raise ExportError(f"{args.output}: a path is written as one of "
                          f"{' '.join(PATH_EXTS)}")
    check_output(args.output, [args.file, args.cost_scale, args.exclude], args.force)


def _per_tet(path, kinds="iuf", what="--cost-scale array"):
    """An .npy array (header, size and dtype checked), or None; shapes are
    checked by find_path."""
    if path is None:
        return None
    from ..inputs.arrays import load_npy
    return load_npy(path, kinds=kinds, what=what)


def _exclude_mask(path, n_tets):
    """--exclude as a bool mask: a bool array as is, integers as indices."""
    import numpy as np
    from ..errors import QueryError
    e = _per_tet(path, "biu", "--exclude array (bools or tetrahedron indices)")
    if e is None or e.dtype == np.bool_:
        return e
    idx = e.reshape(-1)
    if len(idx) and (idx.min() < 0 or idx.max() >= n_tets):
        raise QueryError(f"{path}: tetrahedron index out of range [0, {n_tets})")
    mask = np.zeros(n_tets, dtype=bool)
    mask[idx] = True
    return mask


def _raycast(args) -> int:
    mesh = load_mesh(args.file)
    r = mesh.raycast((args.x0, args.y0, args.z0), (args.x1, args.y1, args.z1))
    if args.json:
        print_json(r.to_dict())
    else:
        print(f"status {r.status}")
        if r.status == "hit":
            p, n = r.point, r.normal
            print(f"face {r.face}\nt {r.t:.9f}\npoint {p[0]:.6f} {p[1]:.6f} {p[2]:.6f}\n"
                  f"normal {n[0]:.6f} {n[1]:.6f} {n[2]:.6f}")
        print(f"tets {len(r.tets)}")
    return 0 if r.clear else 1


def _raycasts(args) -> int:
    def json_items(r):
        return [{"clear": bool(c), "status": str(st), "face": int(f), "t": float(t),
                 "point": p, "normal": n}
                for c, st, f, t, p, n in zip(r.clear, r.status, r.face, r.t, r.point,
                                             r.normal)]

    def text_lines(r):
        # one line a segment: status face t point(3) normal(3)
        return "".join(
            f"{st} {f} {t:.9f} {p[0]:.6f} {p[1]:.6f} {p[2]:.6f} "
            f"{n[0]:.6f} {n[1]:.6f} {n[2]:.6f}\n"
            for st, f, t, p, n in zip(r.status.tolist(), r.face.tolist(), r.t.tolist(),
                                      r.point.tolist(), r.normal.tolist()))

    return _streamed(args, args.segments, lambda mesh, s: mesh.raycast_many(s[:, :3], s[:, 3:]),
                     text_lines, json_items, width=6)
