"""Closest navigable point and distance to the nearest wall.

Walls are the boundary faces (``mesh.boundary_faces``, triangles from
``face_vertices``). Candidates come from a cKDTree over the triangles'
centroids; the exact point-triangle distance is computed on them and the
answer is proved: any triangle not among the candidates is at least
``(k-th centroid distance) - (largest centroid-to-corner radius)`` away; a
point whose best candidate is not within that bound is re-solved exactly
against every wall triangle (vectorised, in chunks).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from . import as_points, scratch

NearestResult = namedtuple("NearestResult", ["points", "tets"])

#: points per batch of the wall search (its memory is ~1 kB a point)
CHUNK = 65536


def _walls(mesh) -> dict:
    s = scratch(mesh)
    if "walls" in s:
        return s["walls"]
    from scipy.spatial import cKDTree
    bf = np.asarray(mesh.boundary_faces, dtype=np.int64)
    tri = np.asarray(mesh.vertices)[np.asarray(mesh.face_vertices)[bf]]   # (B,3,3)
    cen = tri.mean(axis=1)
    rad = np.linalg.norm(tri - cen[:, None], axis=2).max(axis=1) if len(bf) else np.zeros(0)
    t, _ = mesh.face_owner
    s["walls"] = w = dict(bf=bf, tri=tri, cen=cen, rmax=float(rad.max()) if len(bf) else 0.0,
                          tree=cKDTree(cen) if len(bf) else None,
                          owner=np.asarray(t)[bf])
    return w


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
    if w["tree"] is None or n == 0:
        return np.full((n, 3), np.nan), np.full(n, np.inf), np.full(n, -1)
    k = min(k, len(w["bf"]))
    dk, ik = w["tree"].query(pts, k=k)
    dk, ik = dk.reshape(n, k), np.minimum(ik.reshape(n, k), len(w["bf"]) - 1)
    rep = np.repeat(pts, k, axis=0)
    x = closest_on_triangles(rep, w["tri"][ik.ravel()]).reshape(n, k, 3)
    with np.errstate(over="ignore", invalid="ignore"):
        dist = np.linalg.norm(x - pts[:, None], axis=2)
    dist = np.where(np.isnan(dist), np.inf, dist)
    j = np.argmin(dist, axis=1)
    rows = np.arange(n)
    bx, bd, bi = x[rows, j], dist[rows, j], ik[rows, j]
    unsure = np.flatnonzero(~(bd <= dk[:, -1] - w["rmax"])) if k < len(w["bf"]) else []
    unsure = np.asarray(unsure, dtype=np.int64)
    B = len(w["bf"])
    step = max(1, 200_000 // max(B, 1))         # ~100 MB of temporaries a step
    for c0 in range(0, len(unsure), step):          # exact: every wall triangle
        u = unsure[c0:c0 + step]
        xc = closest_on_triangles(np.repeat(pts[u], B, 0), np.tile(w["tri"], (len(u), 1, 1)))
        with np.errstate(over="ignore", invalid="ignore"):
            dc = np.linalg.norm(xc - np.repeat(pts[u], B, 0), axis=1).reshape(len(u), B)
        dc = np.where(np.isnan(dc), np.inf, dc)
        jj = np.argmin(dc, axis=1)
        better = dc[np.arange(len(u)), jj] < bd[u]
        uu = u[better]
        bd[uu] = dc[better, jj[better]]
        bx[uu] = xc.reshape(len(u), B, 3)[np.flatnonzero(better), jj[better]]
        bi[uu] = jj[better]
    return bx, bd, bi


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
