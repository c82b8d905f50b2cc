"""Closest navigable point and distance to the nearest wall.

Walls are the boundary faces (``mesh.boundary_faces``, triangles from
``face_vertices``); triangles with a NaN/inf vertex are never chosen.

Two structures, built once per mesh, answer alike (the nearest triangle; on
an exact tie the one of smallest boundary-face row), so that which one
answers a point never shows:

* a bounding-volume hierarchy of the wall triangles (:func:`_build_bvh`,
  numpy, O(walls) memory), descended per point depth-first, nearer child
  first, pruning every box farther than the best found, with the exact
  closest point on each leaf triangle
  (:func:`regn.geometry._closest_kernels.closest_point_on_triangle`);
* the wall grid (:func:`_build_grid`, built from the hierarchy on the first
  batch of GRID_MIN_BATCH points or more): cubic cells over the walls' box,
  each listing the triangles nearest its centre that can be nearest to one
  of its points (at most GRID_LIST), nearest the centre first. A point tests
  its cell's list until the next entry is too far to win, and is handed to
  the hierarchy, from the best found, only when its list cannot prove the
  answer (the list was cut, or the point lies outside the grid).

The kernels are :mod:`regn.query.walls._nearest_kernels`. Work is chunked and
proportional to the entries, boxes and triangles visited, never to points x
walls.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ...tolerances import ROUND_REL
from ..common import as_points, scratch

NearestResult = namedtuple("NearestResult", ["points", "tets"])

#: :func:`nearest_wall`'s answer, one row a point.
WallResult = namedtuple("WallResult", [
    "distances",    # (N,) float64: as distance_to_wall
    "points",       # (N,3) float64: the closest point of that wall triangle
    "faces",        # (N,) int64: its face row (a boundary face), -1 with no answer
    "normals",      # (N,3) float64: its unit normal out of the volume (as raycast's)
])

#: points per batch of the wall search
CHUNK = 65536

#: triangles per BVH leaf: a leaf's triangles are solved one by one, so a
#: few per leaf trade box tests against triangle tests (8 measured best of 2-16)
BVH_LEAF = 8

#: The wall BVH, as the search kernel reads it (:func:`_build_bvh`).
WallBVH = namedtuple("WallBVH", [
    "box",      # (M,6) float64: node AABB (lo xyz, hi xyz), one 48-byte record a node
    "node",     # (M,2) int64 (first, count): count > 0 a leaf holding triangles
                # first .. first+count-1; count == 0 an inner node with children
                # first and first+1
    "tri",      # (K,9) float64: the finite wall triangles (a, b, c) in leaf order
    "tbox",     # (K,6) each triangle's own AABB (a cheap test before the exact one)
    "row",      # (K,) int64: each triangle's boundary-face row
    "flat",     # (K,) uint8: 1 = solved on its edges (regn.tolerances.FLAT_SIN2)
    "depth",    # int: levels of the tree (node 0, the root, is level 1)
])


#: The wall grid, an index over a WallBVH's triangle arrays (:func:`_build_grid`).
WallGrid = namedtuple("WallGrid", [
    "frame",    # (2,3) float64: the grid's low corner; (cell size, REACH, SLACK): a
                # cell's list is exact for the points within REACH of its centre
                # (half its diagonal and a hair), and the bounds the scan tests are
                # loosened by SLACK (ROUND_REL of the walls' scale) against rounding
    "dims",     # (3,) int64 cells per axis; cell (i, j, k) is number (k ny + j) nx + i
    "start",    # (C+1,) int32: cell c lists tris[start[c]:start[c+1]]
    "tris",     # (E,) int32: positions in the WallBVH's triangle arrays, nearest first
    "lb",       # (E,) float32: each one's distance from the cell's centre, rounded down
    "cut",      # (C,) float32: distance from the centre of the nearest triangle left
                # off the list, rounded down; inf when none is, -inf when the cell's
                # distances overflow (no list: its points go to the hierarchy)
])

#: wall grid cells per wall triangle (8 192 to 2^17 cells). On the demo map, one
#: thread, 20 000 points: 8 -> 5.0 ms, 6 MB, built in 160 ms; 16 -> 4.2 ms,
#: 9.5 MB, 220 ms; 32 -> 3.9 ms, 15 MB, 350 ms
GRID_CELLS_PER_WALL = 16
#: at most this many triangles listed per cell (the memory bound: 8 bytes an
#: entry); a point of a cell whose list was cut may need the hierarchy (the
#: demo map's cells: 50 % cut at 16, 22 % at 32, 6 % at 64)
GRID_LIST = 64
#: the grid is built for a batch of this many points or more (a smaller one is
#: answered by the hierarchy alone, the same answers)
GRID_MIN_BATCH = 4096


def _kernels():
    from . import _nearest_kernels
    return _nearest_kernels


def _wall_tris(mesh) -> dict:
    """The wall rows (bf), their (B,3,3) triangles and owning tets (cached)."""
    s = scratch(mesh)
    if "wall_tris" not in s:
        bf = np.asarray(mesh.boundary_faces, dtype=np.int64)
        tri = np.asarray(mesh.vertices)[np.asarray(mesh.face_vertices)[bf]]   # (B,3,3)
        t, _ = mesh.face_owner
        s["wall_tris"] = dict(bf=bf, tri=tri, owner=np.asarray(t)[bf])
    return s["wall_tris"]


def _wall_normals(mesh) -> np.ndarray:
    """(B,3) each wall's stored unit normal, turned to point out of the
    tetrahedron it bounds, so out of the volume whatever way the file
    orients its normals (cached)."""
    s = scratch(mesh)
    if "wall_normals" not in s:
        w = _wall_tris(mesh)
        n = np.asarray(mesh.face_normals, dtype=np.float64)[w["bf"]]
        inside = np.asarray(mesh.tet_points, dtype=np.float64)[w["owner"]].mean(axis=1)
        out = w["tri"].mean(axis=1) - inside
        flip = np.einsum("bd,bd->b", n, out) < 0
        s["wall_normals"] = np.where(flip[:, None], -n, n)
    return s["wall_normals"]


def _build_bvh(tri, leaf=BVH_LEAF) -> WallBVH | None:
    """A :class:`WallBVH` over the finite triangles of (B,3,3) ``tri``, by
    median splits (on the longest axis of the centroids' extent), built level
    by level (each level's nodes split by selection,
    :func:`regn.query.walls._bvh_kernels.split_nodes`); O(B) memory, None
    when no triangle is finite.
    Siblings are adjacent (one index names both) and a leaf's triangles
    contiguous. Node 0 is the root; every node's box holds its children's
    boxes and its triangles."""
    tri = np.asarray(tri, dtype=np.float64).reshape(-1, 3, 3)
    good = np.flatnonzero(np.isfinite(tri).all(axis=(1, 2)))   # NaN/inf: never chosen
    K = len(good)
    if K == 0:
        return None
    T = tri[good]
    cen = T[:, 0] / 3 + T[:, 1] / 3 + T[:, 2] / 3              # (no overflow near 1e308)
    order = np.arange(K)                       # leaf order, as positions into T
    levels = []                                # per level: (start, end, split?)
    s, e = np.zeros(1, np.int64), np.full(1, K, np.int64)
    while len(s):
        sp = (e - s) > leaf
        levels.append((s, e, sp))
        if not sp.any():
            break
        ss, ee = s[sp], e[sp]
        from . import _bvh_kernels
        _bvh_kernels.split_nodes(order, cen, ss, ee)           # each node's halves
        mid = (ss + ee) // 2
        s = np.column_stack([ss, mid]).ravel()
        e = np.column_stack([mid, ee]).ravel()
    base = np.cumsum([0] + [len(lv[0]) for lv in levels])
    M = int(base[-1])
    node = np.zeros((M, 2), np.int64)
    for L, (s, e, sp) in enumerate(levels):
        ids = base[L] + np.arange(len(s))
        node[ids[~sp], 0] = s[~sp]
        node[ids[~sp], 1] = (e - s)[~sp]
        node[ids[sp], 0] = base[L + 1] + 2 * np.arange(int(sp.sum()))
    T = T[order]
    tlo, thi = T.min(axis=1), T.max(axis=1)
    box = np.empty((M, 6))
    leaves = np.flatnonzero(node[:, 1] > 0)
    leaves = leaves[np.argsort(node[leaves, 0])]      # they tile 0..K-1 in this order
    box[leaves, :3] = np.minimum.reduceat(tlo, node[leaves, 0])
    box[leaves, 3:] = np.maximum.reduceat(thi, node[leaves, 0])
    for L in range(len(levels) - 1, -1, -1):          # inner boxes, bottom up
        s, e, sp = levels[L]
        ids = base[L] + np.flatnonzero(sp)
        c = node[ids, 0]
        box[ids, :3] = np.minimum(box[c, :3], box[c + 1, :3])
        box[ids, 3:] = np.maximum(box[c, 3:], box[c + 1, 3:])
    T = np.ascontiguousarray(T.reshape(K, 9))
    return WallBVH(box=box, node=node, tri=T, tbox=np.ascontiguousarray(np.hstack([tlo, thi])),
                   row=good[order].astype(np.int64), flat=_kernels().flat_flags(T),
                   depth=len(levels))


def _wall_bvh(mesh):
    """The mesh's wall BVH (cached; None without finite walls)."""
    s = scratch(mesh)
    if "wall_bvh" not in s:
        s["wall_bvh"] = _build_bvh(_wall_tris(mesh)["tri"])
    return s["wall_bvh"]


def _build_grid(bvh, workers=None) -> WallGrid | None:
    """The :class:`WallGrid` of a :class:`WallBVH` (see
    :func:`regn.query.walls._nearest_kernels.grid_lists`), its cells shared by
    ``workers`` threads; None when the walls' box is not finite or is a
    point."""
    lo, hi = bvh.box[0, :3], bvh.box[0, 3:]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        ext = hi - lo
        scale = float(np.max(np.abs(bvh.box[0]))) + float(np.max(ext))
        ext = np.maximum(ext, 1e-3 * float(ext.max()))
        target = min(max(GRID_CELLS_PER_WALL * len(bvh.tri), 8192), 1 << 17)
        size = max(float(np.exp((np.log(ext).sum() - np.log(target)) / 3)),
                   float(ext.max()) / 512)          # (logs: the volume may overflow)
    if not (np.isfinite(scale) and np.isfinite(size) and size > 0):
        return None
    dims = np.clip(np.ceil(ext / size), 1, 512).astype(np.int64)
    reach = 0.5 * np.sqrt(3.0) * size * (1 + 1e-6)
    frame = np.array([lo, [size, reach, ROUND_REL * scale]], np.float64)
    n_cells = int(np.prod(dims))
    parts = {}
    from ..._jit import run_chunks
    lists = _kernels().grid_lists
    run_chunks(lambda i, j, _: parts.__setitem__(i, lists(bvh, frame, dims, i, j, GRID_LIST)),
               n_cells, workers, chunk=8192, min_chunk=1024)
    counts, tris, lb, cut = (np.concatenate([parts[i][k] for i in sorted(parts)])
                             for k in range(4))
    start = np.zeros(n_cells + 1, np.int64)
    np.cumsum(counts, out=start[1:])
    return WallGrid(frame, dims, start.astype(np.int32), tris, lb, cut)


def _wall_grid(mesh, workers=None):
    """The mesh's wall grid (cached; None without one)."""
    s = scratch(mesh)
    if "wall_grid" not in s:
        b = _wall_bvh(mesh)
        s["wall_grid"] = None if b is None else _build_grid(b, workers)
    return s["wall_grid"]


def _nearest_wall(mesh, pts, workers=None):
    """(N,3) finite points -> (closest wall points, distances, boundary-face
    rows), by the wall grid for a batch of GRID_MIN_BATCH points or more (or
    once it is built), else by the hierarchy alone: the same answers (see
    :mod:`regn.query.walls._nearest_kernels`). ``workers`` threads share the
    points, CHUNK at a time."""
    n = len(pts)
    b = _wall_bvh(mesh)
    if b is None or n == 0:
        return np.full((n, 3), np.nan), np.full(n, np.inf), np.full(n, -1, np.int64)
    bx, bd, bi = np.empty((n, 3)), np.empty(n), np.empty(n, np.int64)   # all written
    from ..._jit import run_chunks
    pts = np.ascontiguousarray(pts, dtype=np.float64)
    K = _kernels()
    g = _wall_grid(mesh, workers) if n >= GRID_MIN_BATCH or "wall_grid" in scratch(mesh) \
        else None
    if g is None:
        run_chunks(lambda i, j, _: K.nearest_walls(b, pts[i:j], bx[i:j], bd[i:j], bi[i:j]),
                   n, workers, chunk=CHUNK)
    else:
        run_chunks(lambda i, j, _: K.nearest_walls_grid(b, g, pts[i:j], bx[i:j], bd[i:j],
                                                        bi[i:j]), n, workers, chunk=CHUNK)
    return bx, bd, bi


def nearest(mesh, points, *, workers=None) -> NearestResult:
    """Points inside stay (with their tet); others move to the closest point of
    the nearest boundary triangle (tet = the tetrahedron that face bounds,
    which holds the moved point; ``locate`` of that point may name another
    tetrahedron sharing the face's edge or vertex, by its tie rule). NaN/inf
    points, and points so far away that distances overflow (|x| ~ 1e154+),
    -> NaN point, tet -1. Outside points are solved ``CHUNK`` at a time, on
    ``workers`` threads (None: every core; the answers do not depend on it)."""
    from ..locating.locate import locate
    pts = as_points(points)
    tets = locate(mesh, pts, workers=workers)
    out = pts.copy()
    fin = np.all(np.isfinite(pts), axis=1)
    out[~fin] = np.nan
    k = np.flatnonzero((tets < 0) & fin)
    if len(k):
        bx, bd, bi = _nearest_wall(mesh, pts[k], workers)
        ok = (bi >= 0) & np.isfinite(bd)      # overflowing distances: no answer
        bx[~ok] = np.nan
        out[k] = bx
        tets[k[~ok]] = -1
        tets[k[ok]] = _wall_tris(mesh)["owner"][bi[ok]]
    return NearestResult(out, tets)


def nearest_wall(mesh, points, *, workers=None) -> WallResult:
    """For each point, its nearest wall: the distance (as distance_to_wall),
    the closest point of the wall triangle, its face row and its unit normal
    out of the volume. A point with no answer (NaN/inf coordinates, no walls,
    or a distance that overflows) gets NaN distance/point/normal and face -1
    (``inf`` distance when the mesh has no walls or the distance overflows,
    as distance_to_wall). On ``workers`` threads (None: every core)."""
    pts = as_points(points)
    fin = np.isfinite(pts).all(axis=1)
    if fin.all():                        # the usual batch: answered in place
        where, dist, row = _nearest_wall(mesh, pts, workers)
    else:
        where, dist, row = np.full((len(pts), 3), np.nan), np.full(len(pts), np.nan), \
            np.full(len(pts), -1, np.int64)
        where[fin], dist[fin], row[fin] = _nearest_wall(mesh, pts[fin], workers)
    ok = (row >= 0) & np.isfinite(dist)
    if ok.all():
        faces = _wall_tris(mesh)["bf"].take(row)
        normals = _wall_normals(mesh).take(row, axis=0)
    else:
        where[~ok] = np.nan
        faces, normals = np.full(len(pts), -1, np.int64), np.full((len(pts), 3), np.nan)
        if ok.any():
            faces[ok] = _wall_tris(mesh)["bf"][row[ok]]
            normals[ok] = _wall_normals(mesh)[row[ok]]
    return WallResult(dist, where, faces, normals)


def distance_to_wall(mesh, points, *, workers=None) -> np.ndarray:
    """(N,) exact distance to the nearest boundary triangle (NaN for NaN/inf),
    on ``workers`` threads (None: every core)."""
    pts = as_points(points)
    fin = np.isfinite(pts).all(axis=1)
    if fin.all():
        return _nearest_wall(mesh, pts, workers)[1]
    out = np.full(len(pts), np.nan)
    out[fin] = _nearest_wall(mesh, pts[fin], workers)[1]
    return out
