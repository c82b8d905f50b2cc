"""Closest navigable point and distance to the nearest wall.

Walls are the boundary faces (``mesh.boundary_faces``, triangles from
``face_vertices``). A cKDTree indexes *pieces*: each wall triangle is cut
into m x m similar sub-triangles (m from its size), so that no piece's
centroid is farther than ``r_piece`` from any of its points, however large
the triangle (a box wall can be one triangle 100 km across). A point's
answer is then proved in two steps:

1. the exact distance ``best`` to the parent triangles of its 8 nearest
   piece centroids is an upper bound;
2. a wall point closer than ``best`` lies in a piece whose centroid is
   within ``best + r_piece``, so the parents of the pieces in that ball
   (``query_ball_point``) are the only other candidates; they are solved
   exactly. The ball is skipped when the 8th centroid is already beyond it.

Work is chunked and proportional to the candidates found, never to points x
walls.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from . import as_points, scratch

NearestResult = namedtuple("NearestResult", ["points", "tets"])

#: points per batch of the wall search (its memory is ~1 kB a point)
CHUNK = 65536


#: the piece budget: this many per wall triangle, plus 2^18 (~20 MB in all)
PIECES_PER_WALL = 16
#: the pieces aimed at, as a fraction of the median wall triangle radius
PIECE_SIZE = 0.5


def _walls(mesh) -> dict:
    s = scratch(mesh)
    if "walls" in s:
        return s["walls"]
    from scipy.spatial import cKDTree
    bf = np.asarray(mesh.boundary_faces, dtype=np.int64)
    tri = np.asarray(mesh.vertices)[np.asarray(mesh.face_vertices)[bf]]   # (B,3,3)
    t, _ = mesh.face_owner
    w = dict(bf=bf, tri=tri, owner=np.asarray(t)[bf], tree=None, parent=None, r_piece=0.0)
    if len(bf):
        cen = tri.mean(axis=1)
        rad = np.linalg.norm(tri - cen[:, None], axis=2).max(axis=1)
        rad = np.where(np.isfinite(rad), rad, 0.0)
        r_piece = float(np.median(rad)) * PIECE_SIZE or float(rad.max())   # (degenerate walls)
        budget = PIECES_PER_WALL * len(bf) + (1 << 18)
        while True:                          # coarser pieces until they fit the budget
            m = np.maximum(np.ceil(rad / max(r_piece, 1e-300)), 1.0)   # float: no overflow
            if float((m * m).sum()) <= budget or r_piece <= 0:
                break
            r_piece = max(r_piece * 1.5, float(rad.max()) / np.sqrt(budget))
        m = m.astype(np.int64)
        parent, pc = _pieces(tri, m)
        ok = np.isfinite(pc).all(axis=1)
        w.update(tree=cKDTree(pc[ok]), parent=parent[ok],
                 r_piece=float((rad / m).max()) * (1 + 1e-9))
    s["walls"] = w
    return w


def _pieces(tri, m):
    """Centroids of the m*m similar sub-triangles of each triangle (m[i] per
    triangle) and the triangle each belongs to. Each piece's radius is the
    parent's radius / m."""
    parents, cents = [], []
    for mi in np.unique(m):
        sel = np.flatnonzero(m == mi)
        # barycentric (a, b) of the piece centroids, in units of 1/mi:
        # upward pieces (i+1/3, j+1/3) for i+j <= mi-1, downward (i+2/3, j+2/3)
        # for i+j <= mi-2
        i, j = np.meshgrid(np.arange(mi), np.arange(mi), indexing="ij")
        up = (i + j) <= mi - 1
        dn = (i + j) <= mi - 2
        ab = np.concatenate([np.stack([i[up] + 1 / 3, j[up] + 1 / 3], 1),
                             np.stack([i[dn] + 2 / 3, j[dn] + 2 / 3], 1)]) / mi
        T = tri[sel]
        e1, e2 = T[:, 1] - T[:, 0], T[:, 2] - T[:, 0]
        c = T[:, None, 0] + ab[None, :, :1] * e1[:, None] + ab[None, :, 1:] * e2[:, None]
        cents.append(c.reshape(-1, 3))
        parents.append(np.repeat(sel, len(ab)))
    return np.concatenate(parents), np.concatenate(cents)


def closest_on_triangles(p, tri):
    """(K,3) points, (K,3,3) triangles -> (K,3) closest points (exact)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return _closest(p, tri)


def _closest(p, tri):
    P0, P1, P2 = tri[:, 0], tri[:, 1], tri[:, 2]
    e1, e2 = P1 - P0, P2 - P0
    r = p - P0
    d00, d01, d11 = (e1 * e1).sum(1), (e1 * e2).sum(1), (e2 * e2).sum(1)
    d20, d21 = (r * e1).sum(1), (r * e2).sum(1)
    den = d00 * d11 - d01 * d01
    with np.errstate(invalid="ignore", divide="ignore"):
        v = (d11 * d20 - d01 * d21) / den
        w = (d00 * d21 - d01 * d20) / den
    inside = (den > 0) & (v >= 0) & (w >= 0) & (v + w <= 1)
    best = np.where(inside[:, None], P0 + v[:, None] * e1 + w[:, None] * e2, np.nan)
    bestd = np.where(inside, np.linalg.norm(best - p, axis=1), np.inf)
    for A, B in ((P0, P1), (P1, P2), (P2, P0)):
        e = B - A
        ee = (e * e).sum(1)
        with np.errstate(invalid="ignore", divide="ignore"):
            t = np.clip(((p - A) * e).sum(1) / ee, 0, 1)
        t = np.where(ee > 0, t, 0)
        x = A + t[:, None] * e
        dx = np.linalg.norm(x - p, axis=1)
        m = dx < bestd
        best[m], bestd[m] = x[m], dx[m]
    return best


def _nearest_wall(mesh, pts, k=8):
    """(N,3) finite points -> (closest points, distance, boundary-face row)."""
    w = _walls(mesh)
    n = len(pts)
    if w["tree"] is None or n == 0 or w["tree"].n == 0:
        return np.full((n, 3), np.nan), np.full(n, np.inf), np.full(n, -1)
    tree, parent, tri = w["tree"], w["parent"], w["tri"]
    k = min(k, tree.n)
    dk, ik = tree.query(pts, k=k)
    dk, ik = dk.reshape(n, k), np.minimum(ik.reshape(n, k), tree.n - 1)
    cand = parent[ik]                                        # (n,k) wall rows
    x = closest_on_triangles(np.repeat(pts, k, axis=0), tri[cand.ravel()]).reshape(n, k, 3)
    with np.errstate(over="ignore", invalid="ignore"):
        dist = np.linalg.norm(x - pts[:, None], axis=2)
    dist = np.where(np.isnan(dist), np.inf, dist)
    j = np.argmin(dist, axis=1)
    rows = np.arange(n)
    bx, bd, bi = x[rows, j], dist[rows, j], cand[rows, j]
    # step 2 of the module docstring, for points whose ball reaches past
    # their k-th centroid (with every piece among the k, nothing is left)
    radius = bd + w["r_piece"]
    unsure = np.flatnonzero(~(radius <= dk[:, -1])) if k < tree.n else np.zeros(0, np.int64)
    unsure = unsure[np.isfinite(radius[unsure])]
    B = len(tri)
    # in groups of similar radius: cKDTree takes one distance bound per call
    todo = unsure[np.argsort(radius[unsure], kind="stable")]
    kk = 32
    while len(todo):
        kk = min(kk, tree.n)
        again = []
        for c0 in range(0, len(todo), max(1, (1 << 16) // kk)):
            u = todo[c0:c0 + max(1, (1 << 16) // kk)]
            # the ball's pieces, as the kk nearest within the radius
            d2, i2 = tree.query(pts[u], k=kk, distance_upper_bound=float(radius[u].max()))
            d2, i2 = d2.reshape(len(u), kk), i2.reshape(len(u), kk)
            inball = d2 <= radius[u][:, None]
            full = inball[:, -1] & (kk < tree.n)     # the ball may hold more
            row, col = np.nonzero(inball & ~full[:, None])
            _improve(pts, tri, u, row, parent[i2[row, col]], B, bx, bd, bi)
            again.append(u[full])
        todo = np.concatenate(again)
        kk *= 4                                   # rare: far points see many pieces
    return bx, bd, bi


def _improve(pts, tri, u, row, wall, B, bx, bd, bi):
    """Solve the (point u[row], wall) pairs exactly (each pair once) and keep
    each point's best where it beats the current one."""
    if len(row) == 0:
        return
    pair = np.unique(row * B + wall)
    row, wall = pair // B, pair % B
    P = pts[u[row]]
    xc = closest_on_triangles(P, tri[wall])
    with np.errstate(over="ignore", invalid="ignore"):
        dc = np.linalg.norm(xc - P, axis=1)
    dc = np.where(np.isnan(dc), np.inf, dc)
    order = np.lexsort((dc, row))                 # by point, then distance
    first = order[np.r_[True, row[order][1:] != row[order][:-1]]]
    a = u[row[first]]
    better = dc[first] < bd[a]
    a, f = a[better], first[better]
    bd[a], bx[a], bi[a] = dc[f], xc[f], wall[f]


def nearest(mesh, points) -> NearestResult:
    """Points inside stay (with their tet); others move to the closest point of
    the nearest boundary triangle (tet = the tetrahedron that face bounds,
    which holds the moved point; ``locate`` of that point may name another
    tetrahedron sharing the face's edge or vertex, by its tie rule). NaN/inf
    points, and points so far away that distances overflow (|x| ~ 1e154+),
    -> NaN point, tet -1. Outside points are solved ``CHUNK`` at a time."""
    from .locate import locate
    pts = as_points(points)
    tets = locate(mesh, pts)
    out = pts.copy()
    fin = np.all(np.isfinite(pts), axis=1)
    out[~fin] = np.nan
    todo = np.flatnonzero((tets < 0) & fin)
    owner = _walls(mesh)["owner"] if len(todo) else None
    for c0 in range(0, len(todo), CHUNK):
        k = todo[c0:c0 + CHUNK]
        bx, bd, bi = _nearest_wall(mesh, pts[k])
        ok = (bi >= 0) & np.isfinite(bd)      # overflowing distances: no answer
        bx[~ok] = np.nan
        out[k] = bx
        tets[k[~ok]] = -1
        tets[k[ok]] = owner[bi[ok]]
    return NearestResult(out, tets)


def distance_to_wall(mesh, points) -> np.ndarray:
    """(N,) exact distance to the nearest boundary triangle (NaN for NaN/inf)."""
    pts = as_points(points)
    out = np.full(len(pts), np.nan)
    fin = np.flatnonzero(np.all(np.isfinite(pts), axis=1))
    for c0 in range(0, len(fin), CHUNK):
        k = fin[c0:c0 + CHUNK]
        out[k] = _nearest_wall(mesh, pts[k])[1]
    return out
