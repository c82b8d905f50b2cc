"""Closest navigable point and distance to the nearest wall.

Walls are the boundary faces (``mesh.boundary_faces``, triangles from
``face_vertices``); triangles with a NaN/inf vertex are never chosen.

A compiled kernel (:func:`regn.query._nearest_kernels.nearest_walls`)
descends a bounding-volume hierarchy of the wall triangles
(:func:`_build_bvh`, built once per mesh in numpy, O(walls) memory): per
point depth-first, nearer child first, pruning every box whose squared
distance is no less than the best found, with the exact closest point on
each leaf triangle (:func:`regn.geometry._kernels.closest_point_on_triangle`).
Work is chunked and proportional to the boxes and triangles visited, never
to points x walls.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from . import as_points, scratch

NearestResult = namedtuple("NearestResult", ["points", "tets"])

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


def _build_bvh(tri, leaf=BVH_LEAF) -> WallBVH | None:
    """A :class:`WallBVH` over the finite triangles of (B,3,3) ``tri``, by
    median splits (on the longest axis of the centroids' extent), built level
    by level with numpy; O(B) in all, None when no triangle is finite.
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
        lens = ee - ss
        seg = np.repeat(np.arange(len(ss)), lens)
        first = np.cumsum(lens) - lens
        pos = np.arange(lens.sum()) - np.repeat(first, lens) + np.repeat(ss, lens)
        C = cen[order[pos]]
        with np.errstate(over="ignore", invalid="ignore"):
            ext = np.maximum.reduceat(C, first) - np.minimum.reduceat(C, first)
        axis = np.argmax(np.nan_to_num(ext, nan=0.0), axis=1)
        key = C[np.arange(len(C)), axis[seg]]
        order[pos] = order[pos][np.lexsort((key, seg))]       # sort within each node
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


def _nearest_wall(mesh, pts, workers=None):
    """(N,3) finite points -> (closest wall points, distances, boundary-face
    rows); see :func:`regn.query._nearest_kernels.nearest_walls`. ``workers``
    threads share the points, CHUNK at a time."""
    n = len(pts)
    bx, bd, bi = np.full((n, 3), np.nan), np.full(n, np.inf), np.full(n, -1, np.int64)
    b = _wall_bvh(mesh)
    if b is None or n == 0:
        return bx, bd, bi
    from .._jit import run_chunks
    pts = np.ascontiguousarray(pts, dtype=np.float64)
    search = _kernels().nearest_walls
    run_chunks(lambda i, j, _: search(b, pts[i:j], bx[i:j], bd[i:j], bi[i:j]), n, workers,
               chunk=CHUNK)
    return bx, bd, bi


def nearest(mesh, points, *, workers=None) -> NearestResult:
    """Points inside stay (with their tet); others move to the closest point of
    the nearest boundary triangle (tet = the tetrahedron that face bounds,
    which holds the moved point; ``locate`` of that point may name another
    tetrahedron sharing the face's edge or vertex, by its tie rule). NaN/inf
    points, and points so far away that distances overflow (|x| ~ 1e154+),
    -> NaN point, tet -1. Outside points are solved ``CHUNK`` at a time, on
    ``workers`` threads (None: every core; the answers do not depend on it)."""
    from .locate import locate
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


def distance_to_wall(mesh, points, *, workers=None) -> np.ndarray:
    """(N,) exact distance to the nearest boundary triangle (NaN for NaN/inf),
    on ``workers`` threads (None: every core)."""
    pts = as_points(points)
    out = np.full(len(pts), np.nan)
    fin = np.all(np.isfinite(pts), axis=1)
    out[fin] = _nearest_wall(mesh, pts[fin], workers)[1]
    return out
