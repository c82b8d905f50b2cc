"""What the query commands and ``regn serve`` share: the path options (cost
factors, exclusions, blockers) turned into ``find_path`` arguments, and the
JSON document of each query's answer (one implementation, so ``regn X
--json`` and a served ``X`` request answer with the same fields)."""

from __future__ import annotations

from ..errors import QueryError
from ..inputs.numbers import number
from ._common import coordinate


# --- path options -------------------------------------------------------------
def add_path_options(p):
    """The options of every command that searches paths."""
    p.add_argument("--cost-scale", metavar="S.npy",
                   help="one cost factor per tetrahedron (.npy of T floats)")
    p.add_argument("--exclude", metavar="E.npy",
                   help="tetrahedra not to enter (.npy of T bools, or of indices)")
    p.add_argument("--block-sphere", nargs=4, type=coordinate, action="append", default=[],
                   metavar=("X", "Y", "Z", "R"),
                   help="a temporary blocker: no path enters a tetrahedron this "
                        "sphere touches (repeatable)")
    p.add_argument("--block-box", nargs=6, type=coordinate, action="append", default=[],
                   metavar=("X0", "Y0", "Z0", "X1", "Y1", "Z1"),
                   help="a blocking box given by two opposite corners (repeatable)")
    p.add_argument("--block-scale", type=number, metavar="F",
                   help="blockers multiply the cost of the tetrahedra they touch by F "
                        "instead of closing them")


def path_options_of_args(mesh, args) -> dict:
    """``cost_scale`` / ``exclude`` / ``filter`` keyword arguments from the
    command line (the .npy files loaded, header and dtype checked)."""
    from ..inputs.arrays import load_npy
    scale = excl = None
    if args.cost_scale is not None:
        scale = load_npy(args.cost_scale, kinds="iuf", what="--cost-scale array")
    if args.exclude is not None:
        excl = load_npy(args.exclude, kinds="biu",
                        what="--exclude array (bools or tetrahedron indices)")
    return path_options(mesh, cost_scale=scale, exclude=excl, spheres=args.block_sphere,
                        boxes=args.block_box, block_scale=args.block_scale,
                        exclude_source=args.exclude)


def path_options(mesh, *, cost_scale=None, exclude=None, spheres=(), boxes=(),
                 block_scale=None, exclude_source="exclude") -> dict:
    """The keyword arguments of ``find_path`` / ``find_paths`` /
    ``cost_field``: ``exclude`` as a mask (bools as they are, integers as
    tetrahedron indices) and the blockers in a :class:`regn.QueryFilter`
    (None without blockers)."""
    filt = None
    if getattr(mesh, "is_world", False) and (len(spheres) or len(boxes) or
                                             cost_scale is not None or exclude is not None):
        raise QueryError("cost scales, exclusions and blockers are per tile: not available "
                         "for a world (query the tile's .rgn)")
    if len(spheres) or len(boxes):
        from ..query.paths.filters import QueryFilter
        filt = QueryFilter(mesh)
        for s in spheres:
            s = _row(s, 4, "a blocking sphere (x, y, z, r)")
            filt.block_sphere(s[:3], s[3], scale=block_scale)
        for b in boxes:
            b = _row(b, 6, "a blocking box (x0, y0, z0, x1, y1, z1)")
            filt.block_box(b[:3], b[3:], scale=block_scale)
    return dict(cost_scale=cost_scale, filter=filt,
                exclude=exclude_mask(exclude, mesh.n_tets, exclude_source))


def _row(values, n, what):
    import numpy as np
    a = np.asarray(values)
    if a.dtype.kind not in "iuf" or a.shape != (n,):
        raise QueryError(f"{what} must be {n} numbers, got {values!r}")
    return a.astype(np.float64)


def exclude_mask(e, n_tets, source="exclude"):
    """``exclude`` as a bool mask: a bool array as is, integers as indices."""
    if e is None:
        return None
    import numpy as np
    e = np.asarray(e)
    if e.dtype == np.bool_:
        return e
    if e.size == 0:
        return np.zeros(n_tets, dtype=bool)
    if not np.issubdtype(e.dtype, np.integer):
        raise QueryError(f"{source}: exclude needs bools or tetrahedron indices, "
                         f"got {e.dtype}")
    idx = e.reshape(-1)
    if idx.min() < 0 or idx.max() >= n_tets:
        raise QueryError(f"{source}: tetrahedron index out of range [0, {n_tets})")
    mask = np.zeros(n_tets, dtype=bool)
    mask[idx] = True
    return mask


# --- answers as JSON documents ---------------------------------------------------
def locate_doc(tets) -> list:
    return tets


def nearest_doc(r) -> list:
    return [{"point": p, "tet": t} for p, t in zip(r.points, r.tets)]


def clearance_doc(d) -> list:
    return d


def wall_lines(w) -> str:
    """Text lines of :meth:`Mesh.nearest_wall`: distance, wall point, face,
    normal (eight numbers a line)."""
    return "".join(
        f"{d:.6f} {x[0]:.6f} {x[1]:.6f} {x[2]:.6f} {f} {n[0]:.9f} {n[1]:.9f} {n[2]:.9f}\n"
        for d, x, f, n in zip(w.distances.tolist(), w.points.tolist(), w.faces.tolist(),
                              w.normals.tolist()))


def wall_doc(w) -> list:
    return [{"distance": d, "point": x, "face": f, "normal": n}
            for d, x, f, n in zip(w.distances, w.points, w.faces, w.normals)]


def path_doc(path) -> dict:
    return path.to_dict()


def paths_doc(paths) -> list:
    return [p.to_dict() for p in paths]


def raycast_doc(hit) -> dict:
    return hit.to_dict()


def raycasts_doc(r) -> list:
    return [{"clear": bool(c), "status": str(st), "face": int(f), "t": float(t),
             "point": p, "normal": n}
            for c, st, f, t, p, n in zip(r.clear, r.status, r.face, r.t, r.point, r.normal)]


def field_doc(field, points=None) -> dict:
    """The field's status and goal, then per tetrahedron ``cost`` and
    ``next_portal``, or, given points, per point ``cost_at`` and
    ``waypoints``."""
    doc = {"status": field.status, "goal": field.goal, "goal_tet": field.goal_tet}
    if points is None:
        doc.update(cost=field.cost, next_portal=field.next_portal)
    else:
        doc.update(cost_at=field.cost_at(points), waypoints=field.next_waypoint(points))
    return doc
