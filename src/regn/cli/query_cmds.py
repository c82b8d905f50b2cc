"""``regn locate | nearest | clearance | path | raycast | raycasts``: the
navigation queries."""

from __future__ import annotations

import sys


from ._common import load_mesh, print_json, read_points


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
    if name in ("nearest", "path", "raycast", "raycasts"):
        p.add_argument("--radius", type=float, default=0.0, metavar="R",
                       help={"nearest": "the nearest position where a sphere of R metres fits",
                             "path": "a path for a sphere of R metres: it never comes "
                                     "closer than R to a wall",
                             "raycast": "sweep a sphere of R metres instead of a point",
                             "raycasts": "sweep a sphere of R metres instead of a point"}[name])
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func={"locate": _locate, "nearest": _nearest, "clearance": _clearance,
                         "path": _path, "raycast": _raycast, "raycasts": _raycasts}[name])
    return p


def _locate(args) -> int:
    mesh = load_mesh(args.file)
    t = mesh.locate(read_points(args.points))
    if args.json:
        print_json(t)
    else:
        sys.stdout.write("".join(f"{int(v)}\n" for v in t))
    return 0


def _nearest(args) -> int:
    mesh = load_mesh(args.file)
    r = mesh.nearest(read_points(args.points), radius=args.radius)
    if args.json:
        print_json([{"point": p, "tet": t} for p, t in zip(r.points, r.tets)])
    else:
        for p, t in zip(r.points, r.tets):
            print(f"{p[0]:.6f} {p[1]:.6f} {p[2]:.6f} {int(t)}")
    return 0


def _clearance(args) -> int:
    mesh = load_mesh(args.file)
    d = mesh.distance_to_wall(read_points(args.points))
    if args.json:
        print_json(d)
    else:
        sys.stdout.write("".join(f"{v:.6f}\n" for v in d.tolist()))
    return 0


def _path(args) -> int:
    if args.output is not None:                 # fail before the search
        _check_path_output(args)
    mesh = load_mesh(args.file)
    r = mesh.find_path((args.x0, args.y0, args.z0), (args.x1, args.y1, args.z1),
                       smooth=not args.no_smooth, cost_scale=_per_tet(args.cost_scale),
                       exclude=_exclude_mask(args.exclude, mesh.n_tets), radius=args.radius)
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


def _per_tet(path):
    """An .npy array, or None; shapes are checked by find_path."""
    if path is None:
        return None
    import numpy as np
    from ..errors import QueryError
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise QueryError(f"{path}: not a readable .npy array ({exc})") from None


def _exclude_mask(path, n_tets):
    """--exclude as a bool mask: a bool array as is, integers as indices."""
    import numpy as np
    from ..errors import QueryError
    e = _per_tet(path)
    if e is None or e.dtype == np.bool_:
        return e
    if not np.issubdtype(e.dtype, np.integer):
        raise QueryError(f"{path}: --exclude needs bools or tetrahedron indices, "
                         f"got {e.dtype}")
    idx = e.reshape(-1)
    if len(idx) and (idx.min() < 0 or idx.max() >= n_tets):
        raise QueryError(f"{path}: tetrahedron index out of range [0, {n_tets})")
    mask = np.zeros(n_tets, dtype=bool)
    mask[idx] = True
    return mask


def _raycast(args) -> int:
    mesh = load_mesh(args.file)
    r = mesh.raycast((args.x0, args.y0, args.z0), (args.x1, args.y1, args.z1),
                     radius=args.radius)
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
    mesh = load_mesh(args.file)
    seg = read_points(args.segments, width=6)
    r = mesh.raycast_many(seg[:, :3], seg[:, 3:], radius=args.radius)
    if args.json:
        print_json([{"clear": bool(c), "status": str(st), "face": int(f), "t": float(t),
                     "point": p, "normal": n}
                    for c, st, f, t, p, n in zip(r.clear, r.status, r.face, r.t, r.point,
                                                 r.normal)])
    else:
        # one line a segment: status face t point(3) normal(3)
        sys.stdout.write("".join(
            f"{st} {int(f)} {t:.9f} {p[0]:.6f} {p[1]:.6f} {p[2]:.6f} "
            f"{n[0]:.6f} {n[1]:.6f} {n[2]:.6f}\n"
            for st, f, t, p, n in zip(r.status.tolist(), r.face.tolist(), r.t.tolist(),
                                      r.point.tolist(), r.normal.tolist())))
    return 0
