"""Seeded adversarial fuzzing of the queries on valid maps.

    python fuzz/queries.py --seed S --count N [--start I]

The maps are built by the project: random Delaunay maps with holes, and a
jittered lattice whose Delaunay tetrahedralisation is full of slivers (every
tet the builder accepts is kept). Input i of seed S is a pure function of
``numpy.random.default_rng([S, i])``: a map, then query points drawn from one
of these families: uniform in the box, exactly on a vertex, on an edge, on a
face (shared or boundary), on the box walls and corners, strictly inside a
known tet, NaN / +-inf components, huge (1e30..1e300) and tiny (1e-300)
coordinates, start == goal.

Oracle, per input (CPU time limit 1 s, as in fuzz/run.py):
* every call returns or raises ``RegnError``;
* ``locate``: indices in [-1, T); a located tet contains its point (independent
  barycentric test, tolerance 1e-7); a point strictly inside a tet (all
  barycentrics >= 1e-3) is located there; the answer is the same when asked
  again (ties resolve consistently); non-finite points give -1;
* ``nearest``: identity (within 1e-6 of the box size) for located points, and
  its answer is itself located for finite points;
* ``find_path``: statuses from the documented set; a found path starts at the
  start and ends at the goal, its points are located, ``length <= cost``, and
  one input in 20 compares the cost with scipy Dijkstra on the same graph;
  start == goal inside gives cost 0; where it fails with ``goal_outside`` or
  ``unreachable``, ``partial=True`` gives a path from the start to a point of
  the volume, no nearer an outside goal than that goal's nearest wall;
* ``raycast``: a segment between two points of one tet is clear;
  ``line_of_sight`` equals ``raycast(...).clear``; the tets crossed start at
  the located tet and step between neighbours; a hit is a boundary face, its
  point on the face's plane, its normal the face's unit normal, its fraction
  in [0, 1]; a clear segment crosses no boundary triangle, and a hit is the
  first one crossed (independent Moller-Trumbore test with a 1e-6 margin, so
  only crossings no rounding explains count).

Radius forms: one input in four (``RADIUS_SHARE``; drawn after everything
above, so the point-only draws of an input do not change) also draws a
radius from one family: 0, 1e-9, 1e-4..0.3 of the box size (log-uniform),
1..10 times the box size, exactly one finite point's clearance, or an
invalid one (NaN, +-inf, negative, None, a string, a list, an array, an
object), and calls ``find_path``, ``raycast``, ``line_of_sight``,
``raycast_many``, ``nearest`` and ``random_points`` with it. Distances
are the brute-force ones of tests/clearance_reference.py (every segment
against every boundary triangle, exact segment/triangle distance; no
library code); "keeps r" means >= r (1 - 1e-6) - 1e-8 box half-size.
* an invalid radius raises ``QueryError`` from every one of the six calls;
* ``find_path``: statuses from the documented set (docs/queries.md, "Agents
  with a radius"); radius 0 answers as without one (status and points); a
  found path joins start and goal, its points are located, and (ordinary
  coordinates) every segment keeps r; ``start_too_close`` /
  ``goal_too_close`` only where that end's clearance is below r;
* ``line_of_sight`` equals ``raycast_many(...).clear``, equals
  ``raycast(...).clear``; raycast and raycast_many agree on status and hit
  face; a hit fraction is in [0, 1]; a clear capsule keeps r and crosses no
  wall; a hit capsule keeps r up to the hit, and (start inside) the sphere
  at the hit is within r (+ 1e-6 box) of a wall;
* ``nearest``: NaN rows exactly where the tet is -1, none for non-finite
  points; answers are located and keep r; a located point with clearance
  above r (+ slack) stays;
* ``random_points``: finite, located, keep r, repeatable for one seed
  (``QueryError`` when no or too few positions have room is allowed).
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from pathlib import Path

import numpy as np
from scipy.spatial import Delaunay

import regn
from regn.errors import RegnError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import cpu_limit  # noqa: E402
from cpu_limit import Timeout  # noqa: E402
from clearance_reference import (points_clearance, polyline_clearance,  # noqa: E402
                                 segments_clearance, walls)

H = 50_000.0
RADIUS_SHARE = 0.25                # inputs that also try the radius forms
STATUSES = {"ok", "start_outside", "goal_outside", "unreachable", "excluded"}



class Finding(Exception):
    pass


def _corners():
    return np.array([[x, y, z] for z in (-H, H) for y in (-H, H) for x in (-H, H)], float)


def _build(pts, tets, dims):
    """Build, dropping the tets the builder calls degenerate."""
    from regn.geometry import degenerate_threshold, signed_volumes
    P = pts[tets]
    ok = np.abs(signed_volumes(P)) > 4 * degenerate_threshold(P)
    tets = tets[ok]
    used = np.unique(tets)
    remap = np.full(len(pts), -1)
    remap[used] = np.arange(len(used))
    return regn.build(pts[used], remap[tets], bbox=(-H * np.ones(3), H * np.ones(3)),
                      dims=dims)


def make_maps(seed=4321):
    rng = np.random.default_rng(seed)
    maps = []
    for n, holes in ((12, 0.0), (60, 0.2), (200, 0.1)):
        pts = np.vstack([_corners(), rng.uniform(-H, H, (n, 3))])
        tets = Delaunay(pts).simplices
        tets = tets[rng.random(len(tets)) >= holes]
        maps.append(_build(pts, tets, (3, 3, 3)))
    # a jittered 5x5x5 lattice: near-cospherical points, so slivers
    g = np.linspace(-H, H, 5)
    lat = np.stack(np.meshgrid(g, g, g, indexing="ij"), -1).reshape(-1, 3)
    inner = np.all(np.abs(lat) < H, axis=1)
    lat[inner] += rng.uniform(-1, 1, (inner.sum(), 3)) * 1e-4 * (g[1] - g[0])
    maps.append(_build(lat, Delaunay(lat).simplices, (4, 4, 4)))
    return maps


def _bary(mesh, tets, pts):
    P = mesh.tet_points[tets].astype(np.float64)
    A = np.transpose(P[:, 1:] - P[:, :1], (0, 2, 1))
    lam = np.linalg.solve(A, (pts - P[:, 0])[..., None])[..., 0]
    return np.concatenate([1 - lam.sum(1, keepdims=True), lam], axis=1)


def draw_points(mesh, rng, n=8):
    """(n,3) points of one adversarial family, and the tet each is strictly
    inside of (-1 when not known)."""
    V = np.asarray(mesh.vertices)
    T = mesh.n_tets
    fam = int(rng.integers(10))
    known = np.full(n, -1)
    t = rng.integers(T, size=n)
    P = mesh.tet_points[t].astype(np.float64)
    if fam == 0:
        pts = rng.uniform(-H, H, (n, 3))
    elif fam == 1:
        pts = V[rng.integers(len(V), size=n)].copy()
    elif fam == 2:                                   # on an edge
        w = rng.random((n, 1))
        i, j = rng.integers(4, size=n), (rng.integers(1, 4, size=n))
        j = (i + j) % 4
        pts = w * P[np.arange(n), i] + (1 - w) * P[np.arange(n), j]
    elif fam == 3:                                   # on a face
        w = rng.dirichlet(np.ones(3), n)
        f = np.asarray(mesh.face_vertices)[rng.integers(mesh.n_faces, size=n)]
        pts = np.einsum("nk,nkd->nd", w, V[f])
    elif fam == 4:                                   # box walls and corners
        pts = rng.uniform(-H, H, (n, 3))
        axis = rng.integers(3, size=n)
        pts[np.arange(n), axis] = rng.choice([-H, H], n)
        if rng.random() < 0.3:
            pts = _corners()[rng.integers(8, size=n)]
    elif fam == 5:                                   # strictly inside a known tet
        w = rng.dirichlet(np.ones(4), n) * 0.96 + 0.01
        pts = np.einsum("nk,nkd->nd", w, P)
        known = t.copy()
    elif fam == 6:                                   # non-finite components
        pts = rng.uniform(-H, H, (n, 3))
        pts[rng.random((n, 3)) < 0.4] = rng.choice([np.nan, np.inf, -np.inf], 1)[0]
    elif fam == 7:                                   # huge
        pts = rng.choice([-1, 1], (n, 3)) * 10.0 ** rng.uniform(30, 300, (n, 3))
    elif fam == 8:                                   # tiny, around the origin
        pts = rng.choice([-1, 1], (n, 3)) * 10.0 ** rng.uniform(-300, -30, (n, 3))
    else:                                            # mixed near-boundary jitter
        pts = V[rng.integers(len(V), size=n)] + rng.normal(0, 1e-6 * H, (n, 3))
    return np.asarray(pts, dtype=np.float64), known, fam


def _dijkstra_cost(mesh, s, g, S, G):
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import dijkstra
    from regn.format.layout import PORTAL_PAIRS
    F = mesh.n_faces
    nb, tf, pc = mesh.neighbors, mesh.tet_faces, mesh.portal_costs
    rows, cols, w = [], [], []
    for p, (i, j) in enumerate(PORTAL_PAIRS):
        ok = (nb[:, i] >= 0) & (nb[:, j] >= 0)
        rows.append(tf[ok, i])
        cols.append(tf[ok, j])
        w.append(pc[ok, p, 0])
    cen = mesh.face_centroids
    for t, pt, node, out in ((S, s, F, True), (G, g, F + 1, False)):
        f = tf[t][nb[t] >= 0]
        d = np.linalg.norm(cen[f] - pt, axis=1)
        rows.append(np.full(len(f), node) if out else f)
        cols.append(f if out else np.full(len(f), node))
        w.append(d)
    r, c, w = (np.concatenate(x) for x in (rows, cols, w))
    M = coo_matrix((np.maximum(w, 1e-300), (r, c)), shape=(F + 2, F + 2)).tocsr()
    M = M.maximum(M.T)
    return dijkstra(M, indices=F)[F + 1]


def run_one(maps, seed, i):
    rng = np.random.default_rng([seed, i])
    mesh = maps[int(rng.integers(len(maps)))]
    pts, known, fam = draw_points(mesh, rng)
    T = mesh.n_tets
    t = mesh.locate(pts)
    if t.shape != (len(pts),) or np.any((t < -1) | (t >= T)):
        raise Finding(f"locate out of range: {t}")
    if not np.array_equal(t, mesh.locate(pts)):
        raise Finding("locate not repeatable")
    finite = np.isfinite(pts).all(axis=1)
    if np.any(t[~finite] >= 0):
        raise Finding("non-finite point located")
    hit = np.flatnonzero(t >= 0)
    if len(hit) and _bary(mesh, t[hit], pts[hit]).min(axis=1).min() < -1e-7:
        raise Finding(f"located tet does not contain its point (family {fam})")
    k = np.flatnonzero(known >= 0)
    if len(k) and np.any(t[k] != known[k]):
        raise Finding(f"interior point not located in its tet: {t[k]} vs {known[k]}")
    q, tq = mesh.nearest(pts)
    if len(hit) and np.max(np.abs(q[hit] - pts[hit])) > 1e-6 * H:
        raise Finding("nearest moved a point that is inside")
    fin = np.flatnonzero(finite & (np.abs(pts) < 1e6 * H).all(axis=1))
    if len(fin) and np.any(mesh.locate(q[fin]) < 0):
        raise Finding("nearest answer not in the volume")
    a, b = pts[0], pts[1] if rng.random() > 0.15 else pts[0]
    p = mesh.find_path(a, b)
    if p.status not in STATUSES:
        raise Finding(f"unknown path status {p.status!r}")
    if p.found:
        if not (np.allclose(p.points[0], a) and np.allclose(p.points[-1], b)):
            raise Finding("path does not join start and goal")
        if np.any(mesh.locate(p.points) < 0):
            raise Finding("path point outside the volume")
        if p.length > p.cost * (1 + 1e-9) + 1e-9:
            raise Finding(f"length {p.length} > cost {p.cost}")
        if np.array_equal(a, b) and p.cost != 0:
            raise Finding("start == goal with a non-zero cost")
        S, G = int(t[0]), int(mesh.locate(b[None])[0])
        if S != G and i % 20 == 0:
            ref = _dijkstra_cost(mesh, a, b, S, G)
            if not abs(ref - p.cost) <= 1e-9 * max(ref, 1.0):
                raise Finding(f"path cost {p.cost} vs Dijkstra {ref}")
    elif p.status in ("goal_outside", "unreachable"):
        _check_partial(mesh, a, b, p)
    if len(k):
        # a second point strictly inside the first known point's tet
        w = rng.dirichlet(np.ones(4)) * 0.96 + 0.01
        other = w @ mesh.tet_points[known[k[0]]].astype(np.float64)
        if not mesh.raycast(pts[k[0]], other).clear:
            raise Finding("segment inside one tet is not clear")
    _check_segments(mesh, pts[:4], pts[4:8], t[:4])
    mesh.distance_to_wall(pts)
    if rng.random() < RADIUS_SHARE:     # drawn last: the point-only draws are unchanged
        check_radius(mesh, rng, pts, t)
    return fam


def _check_partial(mesh, a, b, plain):
    """find_path(partial=True) where the plain search failed: a path from
    the start to a point of the volume, no nearer the goal than its nearest
    wall when the goal is outside (every point of the volume is that far)."""
    p = mesh.find_path(a, b, partial=True)
    if p.status == plain.status:
        if np.isfinite(b).all() and np.abs(b).max() < 1e12 * H:
            raise Finding(f"partial path not found for a {plain.status} goal")
        return
    if p.status != "partial" or not p.found:
        raise Finding(f"partial path status {p.status!r}")
    if not np.array_equal(p.points[0], a) or np.any(mesh.locate(p.points[-1:]) < 0):
        raise Finding("partial path does not start at the start and end in the volume")
    if plain.status == "goal_outside":
        wall = float(mesh.distance_to_wall(b[None])[0])
        if np.linalg.norm(p.points[-1] - b) < wall * (1 - 1e-9) - 1e-6 * H:
            raise Finding("partial path ends nearer the goal than its nearest wall")


def _crossings(mesh, a, b, margin=1e-6):
    """Fractions s in (margin, 1 - margin) where a -> b crosses a boundary
    triangle well inside it (barycentrics > margin) and not at a grazing
    angle: crossings no rounding can explain away."""
    V = np.asarray(mesh.vertices, np.float64)
    tri = V[np.asarray(mesh.face_vertices)[np.asarray(mesh.boundary_faces)]]
    e1, e2 = tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]
    d = b - a
    h = np.cross(d, e2)
    det = np.einsum("kd,kd->k", e1, h)
    scale = np.linalg.norm(d) * np.linalg.norm(np.cross(e1, e2), axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = 1.0 / det
        sv = a - tri[:, 0]
        u = np.einsum("kd,kd->k", sv, h) * inv
        q = np.cross(sv, e1)
        v = (q @ d) * inv
        frac = np.einsum("kd,kd->k", q, e2) * inv
        ok = ((np.abs(det) > 1e-6 * scale) & (u > margin) & (v > margin)
              & (1 - u - v > margin) & (frac > margin) & (frac < 1 - margin))
    return frac[ok]


def _check_segments(mesh, A, B, TA):
    """raycast against line_of_sight, the adjacency, the hit face's geometry
    and (for ordinary coordinates) an independent segment/boundary-triangle
    test: a clear segment crosses no wall, a hit is the first wall."""
    los = mesh.line_of_sight(A, B)
    nb = np.asarray(mesh.neighbors)
    boundary = set(np.asarray(mesh.boundary_faces).tolist())
    for a, b, ta, clear in zip(A, B, TA, los):
        r = mesh.raycast(a, b)
        if r.clear != bool(clear):
            raise Finding(f"raycast {r.status} but line_of_sight {bool(clear)}")
        if ta >= 0 and len(r.tets) and r.tets[0] != ta:
            raise Finding(f"raycast starts in tet {r.tets[0]}, locate says {ta}")
        for u, w in zip(r.tets[:-1], r.tets[1:]):
            if w not in nb[u]:
                raise Finding(f"raycast steps from tet {u} to {w}, not a neighbour")
        if r.status == "hit":
            if r.face not in boundary:
                raise Finding(f"raycast hit face {r.face}, not a boundary face")
            if not 0.0 <= r.t <= 1.0:
                raise Finding(f"hit fraction {r.t} outside [0, 1]")
            fv = np.asarray(mesh.vertices, np.float64)[np.asarray(mesh.face_vertices)[r.face]]
            n = np.cross(fv[1] - fv[0], fv[2] - fv[0])
            n /= np.linalg.norm(n)
            if abs((r.point - fv[0]) @ n) > 1e-6 * H:
                raise Finding(f"hit point {abs((r.point - fv[0]) @ n)} off its face's plane")
            if abs(np.linalg.norm(r.normal) - 1.0) > 1e-6 or abs(abs(r.normal @ n) - 1) > 1e-6:
                raise Finding("hit normal is not the face's unit normal")
        if not (ta >= 0 and np.all(np.abs(b) < 10 * H) and r.status in ("clear", "hit")):
            continue
        walls = _crossings(mesh, a, b)
        if r.clear and len(walls):
            raise Finding(f"clear segment crosses a wall at s = {walls.min()}")
        if r.status == "hit" and len(walls) and walls.min() < r.t - 1e-6:
            raise Finding(f"hit at s = {r.t}, but a wall is crossed at s = {walls.min()}")


# --- radius forms -------------------------------------------------------------

RADIUS_STATUSES = STATUSES | {"start_too_close", "goal_too_close", "too_narrow"}
SWEEP_STATUSES = {"clear", "hit", "start_outside", "lost"}
REL, ABS = 1e-6, 1e-8 * H          # oracle slack: r (1 - REL) - ABS (0.5 mm here)
INVALID_RADII = (np.nan, np.inf, -np.inf, -1.0, -1e-300, -H, None, "abc", [1.0, 2.0],
                 np.array([np.nan]), object())


def draw_radius(rng):
    """A radius of one adversarial family: (value, valid)."""
    fam = int(rng.integers(6))
    if fam == 0:
        return 0.0, True
    if fam == 1:
        return 1e-9, True
    if fam == 2:                                       # typical: 1e-4 .. 0.3 of the box
        return float(2 * H * 10.0 ** rng.uniform(-4, np.log10(0.3))), True
    if fam == 3:                                       # larger than the box
        return float(2 * H * rng.uniform(1.0, 10.0)), True
    if fam == 4:                                       # near a known clearance: set later
        return -2.0, True
    return INVALID_RADII[int(rng.integers(len(INVALID_RADII)))], False


def _ordinary(p):
    p = np.asarray(p, float)
    return bool(np.isfinite(p).all() and np.all(np.abs(p) <= H))


def _soft(fn, *args, **kw):
    """fn(...), or None when it raises a RegnError (allowed)."""
    try:
        return fn(*args, **kw)
    except RegnError:
        return None


def check_radius(mesh, rng, pts, t):
    """The radius forms of the queries, against the brute-force distances of
    tests/clearance_reference.py (every segment against every wall)."""
    from regn.errors import QueryError
    r, valid = draw_radius(rng)
    A, B = pts[:4], pts[4:8]
    a, b = pts[0], (pts[1] if rng.random() > 0.15 else pts[0])
    seed = int(rng.integers(2**31))
    calls = {
        "find_path": lambda: mesh.find_path(a, b, radius=r),
        "raycast": lambda: mesh.raycast(A[0], B[0], radius=r),
        "line_of_sight": lambda: mesh.line_of_sight(A, B, radius=r),
        "raycast_many": lambda: mesh.raycast_many(A, B, radius=r),
        "nearest": lambda: mesh.nearest(pts, radius=r),
        "random_points": lambda: mesh.random_points(8, radius=r, seed=seed),
    }
    if not valid:
        for name, call in calls.items():
            try:
                call()
            except QueryError:
                continue
            except RegnError as e:
                raise Finding(f"{name}(radius={r!r}) raised {type(e).__name__}, "
                              f"not QueryError") from None
            raise Finding(f"{name}(radius={r!r}) returned instead of raising QueryError")
        return
    tri = walls(mesh)
    if r == -2.0:                  # a radius equal to some finite point's clearance
        ok = [i for i in range(len(pts)) if _ordinary(pts[i])]
        c = points_clearance(pts[ok], tri) if ok else np.zeros(1)
        c = c[np.isfinite(c) & (c > 0)]
        r = float(c[int(rng.integers(len(c)))]) if len(c) else 1e-9
    floor = r * (1 - REL) - ABS

    # find_path
    p = _soft(calls["find_path"])
    if p is not None:
        if p.status not in RADIUS_STATUSES:
            raise Finding(f"unknown radius path status {p.status!r} (r={r!r})")
        if r == 0.0:
            q = mesh.find_path(a, b)
            if q.status != p.status or (p.found and not np.array_equal(p.points, q.points)):
                raise Finding("find_path(radius=0) differs from find_path")
        if p.found:
            P = np.asarray(p.points, float)
            if not (np.allclose(P[0], a) and np.allclose(P[-1], b)):
                raise Finding(f"radius path does not join start and goal (r={r!r})")
            if np.any(mesh.locate(P) < 0):
                raise Finding(f"radius path point outside the volume (r={r!r})")
            if r > 0 and _ordinary(a) and _ordinary(b):
                d = polyline_clearance(P, tri) if len(P) > 1 else points_clearance(P, tri).min()
                if d < floor:
                    raise Finding(f"radius path comes {d!r} from a wall, r={r!r}")
        if p.status in ("start_too_close", "goal_too_close") and r > 0:
            x = a if p.status == "start_too_close" else b
            if _ordinary(x):
                d = points_clearance(x[None], tri)[0]
                if d > r * (1 + REL) + ABS:
                    raise Finding(f"{p.status} but the clearance is {d!r} > r={r!r}")

    # raycast / line_of_sight / raycast_many
    h = _soft(calls["raycast"])
    los = _soft(calls["line_of_sight"])
    many = _soft(calls["raycast_many"])
    if los is not None and many is not None:
        if not np.array_equal(np.asarray(los, bool), np.asarray(many.clear, bool)):
            raise Finding(f"line_of_sight {los} != raycast_many.clear {many.clear} (r={r!r})")
        if not set(np.asarray(many.status).tolist()) <= SWEEP_STATUSES | STATUSES:
            raise Finding(f"unknown raycast_many status {many.status}")
    if h is not None:
        if h.status not in SWEEP_STATUSES:
            raise Finding(f"unknown raycast status {h.status!r}")
        if los is not None and h.clear != bool(los[0]):
            raise Finding(f"raycast(radius) {h.status} but line_of_sight {bool(los[0])} "
                          f"(r={r!r}, a={A[0]!r}, b={B[0]!r})")
        if many is not None and (h.status != many.status[0]
                                 or (h.status == "hit" and h.face != many.face[0])):
            raise Finding(f"raycast {h.status}/{h.face} vs raycast_many "
                          f"{many.status[0]}/{many.face[0]} (r={r!r})")
        if h.status == "hit" and not 0.0 <= h.t <= 1.0:
            raise Finding(f"radius hit fraction {h.t}")
    if many is not None and r > 0:
        for j in range(len(A)):
            if not (_ordinary(A[j]) and _ordinary(B[j])):
                continue
            st = many.status[j]
            if st == "clear":
                d = segments_clearance(A[j][None], B[j][None], tri)[0]
                if d < floor:
                    raise Finding(f"clear capsule comes {d!r} from a wall, r={r!r}, "
                                  f"segment {j}")
                if len(_crossings(mesh, A[j], B[j])):
                    raise Finding("clear capsule crosses a wall")
            elif st == "hit" and many.t[j] > 0:
                e = A[j] + many.t[j] * (B[j] - A[j])
                d = segments_clearance(A[j][None], e[None], tri)[0]
                if d < floor:
                    raise Finding(f"capsule before the hit (t={many.t[j]}) comes {d!r} "
                                  f"from a wall, r={r!r}")
                if mesh.locate(A[j][None])[0] >= 0:
                    de = points_clearance(e[None], tri)[0]
                    if de > r * (1 + REL) + 1e-6 * H:
                        raise Finding(f"hit at t={many.t[j]} but the sphere there is "
                                      f"{de!r} from every wall, r={r!r}")

    # nearest
    res = _soft(calls["nearest"])
    if res is not None:
        q, tq = res
        q, tq = np.asarray(q, float), np.asarray(tq)
        if q.shape != pts.shape or tq.shape != (len(pts),):
            raise Finding("nearest(radius) shapes")
        got = np.isfinite(q).all(axis=1)
        if np.any(got != (tq >= 0)):
            raise Finding("nearest(radius): NaN answers and -1 tets disagree")
        if np.any(got & ~np.isfinite(pts).all(axis=1)):
            raise Finding("nearest(radius) answered a non-finite point")
        g = np.flatnonzero(got)
        if len(g):
            if np.any(mesh.locate(q[g]) < 0):
                raise Finding("nearest(radius) answer not in the volume")
            if r > 0:
                d = points_clearance(q[g], tri)
                if d.min() < floor:
                    raise Finding(f"nearest(radius) answer {d.min()!r} from a wall, r={r!r}")
        if r > 0:
            for j in range(len(pts)):
                if t[j] >= 0 and _ordinary(pts[j]):
                    d = points_clearance(pts[j][None], tri)[0]
                    if d > r * (1 + REL) + 1e-6 * H and not (
                            got[j] and np.max(np.abs(q[j] - pts[j])) <= 1e-6 * H):
                        raise Finding(f"nearest(radius) moved a point with room "
                                      f"({d!r} > r={r!r})")

    # random_points
    R = _soft(calls["random_points"])
    if R is not None:
        R = np.asarray(R, float)
        if R.shape != (8, 3) or not np.isfinite(R).all():
            raise Finding(f"random_points(radius) shape {R.shape}")
        if np.any(mesh.locate(R) < 0):
            raise Finding("random_points(radius) point not in the volume")
        if r > 0:
            d = points_clearance(R, tri)
            if d.min() < floor:
                raise Finding(f"random point {d.min()!r} from a wall, r={r!r}")
        if not np.array_equal(R, mesh.random_points(8, radius=r, seed=seed)):
            raise Finding("random_points(radius, seed) not repeatable")


def warm_radius(mesh):
    """Compile the radius and partial-path kernels and the per-mesh portal
    clearances outside the CPU limit (as the warm-up run does for the point
    queries): an alarm raised inside numba's compiler corrupts its state."""
    P = mesh.random_points(4, seed=0)
    for r in (1e-9, 0.01 * H):
        for call in (lambda: mesh.find_path(P[0], P[1], radius=r),
                     lambda: mesh.find_path(P[0], P[1], radius=r, smooth=False),
                     lambda: mesh.raycast(P[0], P[1], radius=r),
                     lambda: mesh.raycast(P[0], 3 * H * np.ones(3), radius=r),
                     lambda: mesh.line_of_sight(P[:2], P[2:], radius=r),
                     lambda: mesh.raycast_many(P[:2], P[2:], radius=r),
                     lambda: mesh.nearest(np.vstack([P, 2 * H * np.ones((1, 3))]), radius=r),
                     lambda: mesh.random_points(4, radius=r, seed=0),
                     lambda: mesh.find_path(P[0], 3 * H * np.ones(3), partial=True),
                     lambda: mesh.find_paths(P[:2], np.vstack([P[2:3], 3 * H * np.ones((1, 3))]),
                                             partial=True)):
            try:
                call()
            except RegnError:
                pass


def campaign(seed, start, count, timeout=1.0):
    maps = make_maps()
    for m in maps:                                  # warm-up: compile, caches
        try:
            run_one([m], seed, 0)
        except (RegnError, Finding):
            pass
        warm_radius(m)
    findings, slowest = [], (0.0, None)
    for i in range(start, start + count):
        t0 = time.perf_counter()
        cpu_limit.arm(timeout)
        try:
            run_one(maps, seed, i)
        except RegnError:
            pass
        except Timeout:
            findings.append((i, "timeout"))
        except Exception:   # noqa: BLE001 - any other exception is a finding
            findings.append((i, traceback.format_exc(limit=3)))
        finally:
            cpu_limit.disarm()
        dt = time.perf_counter() - t0
        if dt > slowest[0]:
            slowest = (dt, i)
    return findings, slowest


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--timeout", type=float, default=1.0)
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    findings, slowest = campaign(a.seed, a.start, a.count, a.timeout)
    dt = time.perf_counter() - t0
    print(f"query fuzz seed {a.seed} inputs {a.start}..{a.start + a.count - 1}: "
          f"{a.count} in {dt:.1f} s ({a.count / dt:.0f}/s)")
    print(f"findings: {len(findings)}")
    for i, what in findings[:20]:
        print(f"  i={i}: {what}")
    print(f"slowest input: {slowest[0] * 1000:.1f} ms (index {slowest[1]})")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
