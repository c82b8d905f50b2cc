"""Obstacles of a stage, and exact geometric tests of tetrahedra against them.

Two kinds of obstacle fill a stage's box with holes:

* :class:`Sphere` — an asteroid, a closed ball;
* :class:`TriangleMesh` — any closed triangle surface (loaded from .obj, .ply,
  .stl, ... with :func:`load_obstacle_mesh`), the solid it encloses.

Either can be *inflated* by the agent's radius: a sphere grows, a triangle mesh
keeps its surface and remembers the distance, so "meets the inflated solid"
means "comes within that distance of the solid".

Every test here treats the sets as closed (touching counts) and works on whole
batches: candidate pairs come from bounding boxes through a bucket grid, so the
work follows the number of close pairs, never a dense tets x triangles matrix,
and the exact kernels run over chunks of pairs.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from dataclasses import dataclass, field

import numpy as np

from ..errors import BuildError

#: Pairs per vectorised batch of an exact kernel.
PAIR_CHUNK = 40_000
#: Candidate (box, point) pairs generated per batch by :func:`box_point_pairs`.
CANDIDATE_CHUNK = 2_000_000

_TET_EDGES = np.array([[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]])
_TET_FACES = np.array([[1, 2, 3], [0, 2, 3], [0, 1, 3], [0, 1, 2]])


# --------------------------------------------------------------------------------------
# small vectorised kernels (every argument is a stack of points, shape (..., 3))
# --------------------------------------------------------------------------------------

def _dot(a, b):
    return np.einsum("...i,...i->...", a, b)


def point_segment_distance(p, a, b):
    """Distance from points ``p`` to segments ``[a, b]`` (broadcast, (...,3))."""
    d = b - a
    dd = _dot(d, d)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(dd > 0, _dot(p - a, d) / np.where(dd > 0, dd, 1.0), 0.0)
    t = np.clip(t, 0.0, 1.0)
    return np.linalg.norm(p - (a + t[..., None] * d), axis=-1)


def point_triangle_distance(p, a, b, c):
    """Exact distance from points ``p`` to closed triangles ``abc`` (broadcast).

    The projection onto the plane is the answer when it falls inside the
    triangle; otherwise the closest point is on the boundary, so the distance
    is the least of the three edge distances. Degenerate (zero-area) triangles
    fall through to the edge distances.
    """
    ab = b - a
    ac = c - a
    n = np.cross(ab, ac)
    nn = _dot(n, n)
    s1 = _dot(np.cross(ab, p - a), n)
    s2 = _dot(np.cross(c - b, p - b), n)
    s3 = _dot(np.cross(a - c, p - c), n)
    inside = (s1 >= 0) & (s2 >= 0) & (s3 >= 0) & (nn > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        dplane = np.abs(_dot(p - a, n)) / np.sqrt(np.where(nn > 0, nn, 1.0))
    dedge = np.minimum(np.minimum(point_segment_distance(p, a, b),
                                  point_segment_distance(p, b, c)),
                       point_segment_distance(p, c, a))
    return np.where(inside, np.minimum(dplane, dedge), dedge)


def segment_segment_distance(p1, q1, p2, q2):
    """Exact distance between segments ``[p1, q1]`` and ``[p2, q2]`` (broadcast).

    The clamped closest-parameter method; parallel and zero-length segments are
    handled (the parameter of one is fixed and the other clamped, then the
    first is re-solved for the clamped end).
    """
    d1 = q1 - p1
    d2 = q2 - p2
    r = p1 - p2
    a = _dot(d1, d1)
    e = _dot(d2, d2)
    f = _dot(d2, r)
    c = _dot(d1, r)
    b = _dot(d1, d2)
    tiny = 1e-300
    a_ok = a > tiny
    e_ok = e > tiny
    a_s = np.where(a_ok, a, 1.0)
    e_s = np.where(e_ok, e, 1.0)
    denom = a * e - b * b
    with np.errstate(invalid="ignore", divide="ignore"):
        gen = denom > 1e-14 * a * e
        s = np.where(gen, np.clip((b * f - c * e) / np.where(gen, denom, 1.0), 0, 1), 0.0)
        t = (b * s + f) / e_s
        s = np.where(t < 0, np.clip(-c / a_s, 0, 1), np.where(t > 1, np.clip((b - c) / a_s, 0, 1), s))
        t = np.clip(t, 0, 1)
        # zero-length cases
        s = np.where(~a_ok, 0.0, np.where(~e_ok, np.clip(-c / a_s, 0, 1), s))
        t = np.where(~e_ok, 0.0, np.where(~a_ok, np.clip(f / e_s, 0, 1), t))
    return np.linalg.norm((p1 + s[..., None] * d1) - (p2 + t[..., None] * d2), axis=-1)


def _orient(a, b, c, d):
    """6 x signed volume of (a, b, c, d)."""
    return _dot(np.cross(b - a, c - a), d - a)


def points_in_tets(p, tet):
    """Closed point-in-tetrahedron test, pair by pair: ``p`` (P,3), ``tet`` (P,4,3)."""
    v = tet
    total = _orient(v[:, 0], v[:, 1], v[:, 2], v[:, 3])
    sgn = np.sign(total)
    inside = sgn != 0
    for k in range(4):
        w = [v[:, i] for i in range(4)]
        w[k] = p
        inside &= _orient(*w) * sgn >= 0
    return inside


def point_tet_distance(p, tet):
    """Exact distance from ``p`` (P,3) to the closed tetrahedra ``tet`` (P,4,3), pairwise."""
    p = np.asarray(p, np.float64)
    tet = np.asarray(tet, np.float64)
    o = tet[:, 0:1, :]                      # work near the tet: less round-off
    q = p - o[:, 0]
    t = tet - o
    d = np.full(len(p), np.inf)
    for f in _TET_FACES:
        d = np.minimum(d, point_triangle_distance(q, t[:, f[0]], t[:, f[1]], t[:, f[2]]))
    return np.where(points_in_tets(q, t), 0.0, d)


def tet_triangle_intersect(tet, tri, tol=0.0):
    """Closed tetrahedron/triangle intersection by separating axes, pair by pair.

    ``tet`` (P,4,3), ``tri`` (P,3,3). Axes: the 4 face normals of the tet, the
    triangle's normal, the 18 tet-edge x triangle-edge crosses, and, for the
    flat triangle's degenerate "side faces", normal x each triangle edge and
    each tet edge x normal. Two convex sets are disjoint exactly when one of
    these axes separates them, so the test is exact; ``tol`` > 0 keeps pairs
    whose gap along every axis is at most ``tol`` (conservative).
    """
    tet = np.asarray(tet, np.float64)
    tri = np.asarray(tri, np.float64)
    o = tet[:, 0:1, :]
    t = tet - o
    r = tri - o
    te = t[:, _TET_EDGES[:, 1]] - t[:, _TET_EDGES[:, 0]]                  # (P,6,3)
    re = r[:, [1, 2, 0]] - r                                                # (P,3,3)
    tn = np.cross(t[:, _TET_FACES[:, 1]] - t[:, _TET_FACES[:, 0]],
                  t[:, _TET_FACES[:, 2]] - t[:, _TET_FACES[:, 0]])          # (P,4,3)
    n = np.cross(re[:, 0], r[:, 2] - r[:, 0])[:, None, :]                   # (P,1,3)
    ee = np.cross(te[:, :, None, :], re[:, None, :, :]).reshape(len(t), 18, 3)
    side = np.cross(n, re)                                                  # (P,3,3)
    ten = np.cross(te, n)                                                   # (P,6,3)
    axes = np.concatenate([tn, n, ee, side, ten], axis=1)                   # (P,32,3)
    pt = np.einsum("pad,pvd->pav", axes, t)
    pr = np.einsum("pad,pvd->pav", axes, r)
    gap = np.maximum(pr.min(axis=2) - pt.max(axis=2), pt.min(axis=2) - pr.max(axis=2))
    if tol > 0:
        sep = gap > tol * np.linalg.norm(axes, axis=2)
    else:
        sep = gap > 0
    return ~sep.any(axis=1)


def tet_triangle_distance(tet, tri):
    """Exact distance between closed tetrahedra and triangles, pair by pair.

    Zero when they intersect; otherwise the least of the vertex/face,
    face/vertex and edge/edge distances (where the closest pair of two disjoint
    convex polytopes always lies).
    """
    tet = np.asarray(tet, np.float64)
    tri = np.asarray(tri, np.float64)
    o = tet[:, 0:1, :]
    t = tet - o
    r = tri - o
    d = np.full(len(t), np.inf)
    for k in range(4):
        d = np.minimum(d, point_triangle_distance(t[:, k], r[:, 0], r[:, 1], r[:, 2]))
    for k in range(3):
        for f in _TET_FACES:
            d = np.minimum(d, point_triangle_distance(r[:, k], t[:, f[0]], t[:, f[1]], t[:, f[2]]))
    for i, j in _TET_EDGES:
        for k in range(3):
            d = np.minimum(d, segment_segment_distance(t[:, i], t[:, j], r[:, k], r[:, (k + 1) % 3]))
    return np.where(tet_triangle_intersect(tet, tri), 0.0, d)


# --------------------------------------------------------------------------------------
# candidate pairs
# --------------------------------------------------------------------------------------

def _expand(counts):
    """For items with ``counts``, (item index, offset within item) of every slot."""
    counts = np.asarray(counts, np.int64)
    total = int(counts.sum())
    item = np.repeat(np.arange(len(counts)), counts)
    start = np.cumsum(counts) - counts
    return item, np.arange(total, dtype=np.int64) - start[item]


def box_point_pairs(lo, hi, points, *, chunk=CANDIDATE_CHUNK):
    """Every (box, point) pair with the point in the closed box, in batches.

    ``lo``/``hi`` (M,3), ``points`` (N,3). Points are bucketed on a uniform
    grid; each box visits the buckets its range covers. Yields
    ``(box_index, point_index)`` int64 arrays.
    """
    lo = np.asarray(lo, np.float64).reshape(-1, 3)
    hi = np.asarray(hi, np.float64).reshape(-1, 3)
    pts = np.asarray(points, np.float64).reshape(-1, 3)
    if len(lo) == 0 or len(pts) == 0:
        return
    plo = pts.min(axis=0)
    phi = pts.max(axis=0)
    ext = phi - plo
    span_all = max(float(ext.max()), 1e-300)
    ext = np.maximum(ext, span_all * 1e-6)
    # bucket edge: about two points a bucket, not much smaller than a typical box
    target = (float(np.prod(ext)) / max(len(pts) / 2.0, 1.0)) ** (1.0 / 3.0)
    box_size = np.median(np.max(hi - lo, axis=1))
    edge = max(target, 0.5 * float(box_size), span_all / 256.0)
    nb = np.clip(np.ceil(ext / edge), 1, 256).astype(np.int64)
    cell = ext / nb
    pc = np.clip(np.floor((pts - plo) / cell), 0, nb - 1).astype(np.int64)
    pid = (pc[:, 2] * nb[1] + pc[:, 1]) * nb[0] + pc[:, 0]
    order = np.argsort(pid, kind="stable")
    counts = np.bincount(pid, minlength=int(np.prod(nb)))
    starts = np.cumsum(counts) - counts

    live = np.nonzero(np.all(hi >= plo, axis=1) & np.all(lo <= phi, axis=1))[0]
    if len(live) == 0:
        return
    with np.errstate(invalid="ignore", over="ignore"):
        blo = np.clip(np.floor((lo[live] - plo) / cell), 0, nb - 1).astype(np.int64)
        bhi = np.clip(np.floor((hi[live] - plo) / cell), 0, nb - 1).astype(np.int64)
    span = bhi - blo + 1
    nspan = span.prod(axis=1)
    # process boxes in groups whose bucket count stays bounded
    csum = np.cumsum(nspan)
    g0 = 0
    while g0 < len(live):
        base = csum[g0 - 1] if g0 else 0
        g1 = int(np.searchsorted(csum, base + chunk, side="right"))
        g1 = max(g1, g0 + 1)
        sel = np.arange(g0, g1)
        item, off = _expand(nspan[sel])
        sx = span[sel, 0][item]
        sy = span[sel, 1][item]
        bx = blo[sel, 0][item] + off % sx
        by = blo[sel, 1][item] + (off // sx) % sy
        bz = blo[sel, 2][item] + off // (sx * sy)
        bucket = (bz * nb[1] + by) * nb[0] + bx
        cnt = counts[bucket]
        keep = cnt > 0
        item, bucket, cnt = item[keep], bucket[keep], cnt[keep]
        ccs = np.cumsum(cnt)
        h0 = 0
        while h0 < len(item):
            hb = ccs[h0 - 1] if h0 else 0
            h1 = max(int(np.searchsorted(ccs, hb + chunk, side="right")), h0 + 1)
            it2, off2 = _expand(cnt[h0:h1])
            box = live[sel[item[h0:h1][it2]]]
            pt = order[starts[bucket[h0:h1][it2]] + off2]
            inside = np.all((pts[pt] >= lo[box]) & (pts[pt] <= hi[box]), axis=1)
            if inside.any():
                yield box[inside], pt[inside]
            h0 = h1
        g0 = g1


def aabb_pairs(lo_a, hi_a, lo_b, hi_b, pad=0.0, *, chunk=CANDIDATE_CHUNK):
    """Every (i, j) with closed boxes a_i and b_j within ``pad`` of overlapping.

    The b boxes are grouped by size (factors of 2), so a few large ones do
    not widen the search for all; each group is searched by its box centres.
    Yields ``(i, j)`` int64 arrays in batches.
    """
    lo_a = np.asarray(lo_a, np.float64).reshape(-1, 3)
    hi_a = np.asarray(hi_a, np.float64).reshape(-1, 3)
    lo_b = np.asarray(lo_b, np.float64).reshape(-1, 3)
    hi_b = np.asarray(hi_b, np.float64).reshape(-1, 3)
    if len(lo_a) == 0 or len(lo_b) == 0:
        return
    half = (hi_b - lo_b) / 2
    centre = (hi_b + lo_b) / 2
    size = half.max(axis=1)
    smin = max(float(size[size > 0].min()) if np.any(size > 0) else 1.0, 1e-300)
    cls = np.floor(np.log2(np.maximum(size, smin) / smin)).astype(np.int64)
    for k in np.unique(cls):
        members = np.nonzero(cls == k)[0]
        reach = half[members].max(axis=0) + pad
        for i, jj in box_point_pairs(lo_a - reach, hi_a + reach, centre[members], chunk=chunk):
            j = members[jj]
            ok = np.all((lo_a[i] <= hi_b[j] + pad) & (hi_a[i] >= lo_b[j] - pad), axis=1)
            if ok.any():
                yield i[ok], j[ok]


def tet_bounds(tet_points):
    p = np.asarray(tet_points, np.float64)
    return p.min(axis=1), p.max(axis=1)


# --------------------------------------------------------------------------------------
# spheres
# --------------------------------------------------------------------------------------

def _as_points(points):
    p = np.asarray(points, np.float64)
    if p.ndim == 1:
        p = p.reshape(1, 3)
    if p.ndim != 2 or p.shape[1] != 3:
        raise BuildError(f"points must be (N,3), got shape {p.shape}")
    return p


def _as_tets(tet_points):
    p = np.asarray(tet_points, np.float64)
    if p.ndim != 3 or p.shape[1:] != (4, 3):
        raise BuildError(f"tetrahedron points must be (T,4,3), got shape {p.shape}")
    return p


def tets_sphere_distance(tet_points, centres, radii, max_distance=0.0):
    """(T,) distance from each tetrahedron to the nearest of the balls
    ``(centres (S,3), radii (S,))``: exact where it is at most ``max_distance``,
    ``inf`` beyond (0 when a tet meets a ball)."""
    tp = _as_tets(tet_points)
    c = np.asarray(centres, np.float64).reshape(-1, 3)
    r = np.asarray(radii, np.float64).reshape(-1)
    out = np.full(len(tp), np.inf)
    if len(tp) == 0 or len(c) == 0:
        return out
    tlo, thi = tet_bounds(tp)
    for i, j in aabb_pairs(tlo, thi, c - r[:, None], c + r[:, None], pad=max_distance):
        for s in range(0, len(i), PAIR_CHUNK):
            ii, jj = i[s:s + PAIR_CHUNK], j[s:s + PAIR_CHUNK]
            gap = np.maximum(point_tet_distance(c[jj], tp[ii]) - r[jj], 0.0)
            np.minimum.at(out, ii, gap)
    out[out > max_distance] = np.inf
    return out


def tets_intersect_sphere(tet_points, centre, radius, tol=0.0):
    """(T,) bool: does each closed tetrahedron (T,4,3) meet the closed ball?

    Exact: the distance from the centre to the closest point of the
    tetrahedron (zero when the centre is inside) is at most ``radius``
    (``radius + tol`` with a tolerance).
    """
    tp = _as_tets(tet_points)
    c = np.asarray(centre, np.float64).reshape(1, 3)
    d = tets_sphere_distance(tp, c, [float(radius)], max_distance=tol)
    return d <= tol


def tets_intersect_spheres(tet_points, centres, radii, tol=0.0):
    """(T,) bool: does each tetrahedron meet any of the balls (vectorised)?"""
    return tets_sphere_distance(tet_points, centres, radii, max_distance=tol) <= tol


def _fibonacci_sphere(n):
    i = np.arange(n) + 0.5
    z = 1.0 - 2.0 * i / n
    rr = np.sqrt(np.maximum(0.0, 1.0 - z * z))
    phi = i * math.pi * (3.0 - math.sqrt(5.0))
    return np.stack([rr * np.cos(phi), rr * np.sin(phi), z], axis=1)


_INRADIUS = {}


def fibonacci_inradius(n):
    """Inradius of the hull of ``n`` Fibonacci points on the unit sphere."""
    if n not in _INRADIUS:
        from scipy.spatial import ConvexHull
        hull = ConvexHull(_fibonacci_sphere(n))
        _INRADIUS[n] = float(np.min(-hull.equations[:, 3]))
    return _INRADIUS[n]


def random_rotation(rng):
    """A uniformly random rotation matrix drawn from ``rng``."""
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


@dataclass(frozen=True, eq=False)
class Sphere:
    """A closed ball: ``centre`` (3,) and ``radius`` (> 0), in metres.

    Spheres compare equal when centre and radius are equal. Every query takes
    an optional extra inflation ``r`` (the agent's radius): the ball then
    counts as ``radius + r``.
    """

    centre: np.ndarray
    radius: float

    def __post_init__(self):
        c = np.asarray(self.centre, np.float64).reshape(-1)
        if c.shape != (3,) or not np.isfinite(c).all():
            raise BuildError(f"sphere centre must be 3 finite numbers, got {self.centre!r}")
        r = float(self.radius)
        if not (math.isfinite(r) and r > 0):
            raise BuildError(f"sphere radius must be a finite number > 0, got {self.radius!r}")
        c.setflags(write=False)
        object.__setattr__(self, "centre", c)
        object.__setattr__(self, "radius", r)

    def __repr__(self):
        x, y, z = self.centre
        return f"Sphere(centre=({x:g}, {y:g}, {z:g}), radius={self.radius:g})"

    def __eq__(self, other):
        if not isinstance(other, Sphere):
            return NotImplemented
        return bool(np.array_equal(self.centre, other.centre)) and self.radius == other.radius

    def __hash__(self):
        return hash((tuple(self.centre.tolist()), self.radius))

    def inflated(self, r):
        """The ball grown by ``r`` >= 0."""
        r = float(r)
        if not r >= 0:
            raise BuildError(f"inflation must be >= 0, got {r}")
        return Sphere(self.centre, self.radius + r) if r else self

    def bounds(self):
        return self.centre - self.radius, self.centre + self.radius

    def signed_distance(self, points):
        """Signed distance to the ball's surface (negative inside)."""
        return np.linalg.norm(_as_points(points) - self.centre, axis=1) - self.radius

    def contains(self, points, r=0.0):
        """(N,) bool: points in the closed ball grown by ``r``."""
        return self.signed_distance(points) <= r

    def near(self, points, d):
        """(N,) bool: points within distance ``d`` of the ball (inside counts)."""
        return self.signed_distance(points) <= d

    def distance_lower_bound(self, points):
        return np.maximum(self.signed_distance(points), 0.0)

    def tets_intersect(self, tet_points, r=0.0):
        """(T,) bool: does each closed tet meet the ball grown by ``r``? (exact)"""
        return tets_intersect_sphere(tet_points, self.centre, self.radius, r)

    def tet_distance(self, tet_points, max_distance=0.0):
        return tets_sphere_distance(tet_points, self.centre.reshape(1, 3), [self.radius],
                                    max_distance)

    def shell(self, spacing, rng, *, min_points=12, max_points=20_000):
        """Points just outside the ball whose hull contains it.

        About one point per ``spacing``-sized patch of surface (at least
        ``min_points``) on a Fibonacci sphere turned at random, at a radius
        chosen so the hull of the points clears the ball.

        Returns ``(points (N,3), offset)``: ``offset`` is how far the shell
        is outside the ball.
        """
        n_est = 4.0 * math.pi * (1.08 * self.radius) ** 2 / (0.866 * spacing ** 2)
        n = int(np.clip(math.ceil(n_est), min_points, max_points))
        rs = self.radius / fibonacci_inradius(n) * (1.0 + 2e-3)
        pts = self.centre + rs * (_fibonacci_sphere(n) @ random_rotation(rng).T)
        return pts, rs - self.radius

    def shell_points(self, r, spacing, offsets, *, max_points=20_000):
        """(N,3) points on shells around the ball grown by ``r``: one shell at
        radius ``R * (1 + eps)`` (``R = radius + r``) for each ``eps`` in
        ``offsets``, about ``spacing`` apart (Fibonacci spheres, each shell
        turned half a step from the previous one). Deterministic.

        The point count of the innermost shell is raised, if need be, until
        the hull of its points clears the ball by a margin, so Delaunay
        triangles on it do not cut into the ball.
        """
        R = self.radius + float(r)
        spacing = float(spacing)
        if not spacing > 0:
            raise BuildError(f"shell spacing must be > 0, got {spacing}")
        out = []
        for k, eps in enumerate(offsets):
            Rs = R * (1.0 + float(eps))
            n = int(np.clip(math.ceil(4.0 * math.pi * Rs * Rs / (0.866 * spacing * spacing)),
                            12, max_points))
            if k == 0 and eps > 0:
                need = 1.0 / (1.0 + 0.5 * float(eps))       # hull inradius / Rs
                while n < max_points and fibonacci_inradius(n) < need:
                    n = min(max_points, int(n * 1.15) + 1)
            u = _fibonacci_sphere(n)
            if k % 2:
                a = math.pi * (3.0 - math.sqrt(5.0)) / 2.0
                rot = np.array([[math.cos(a), -math.sin(a), 0.0],
                                [math.sin(a), math.cos(a), 0.0], [0.0, 0.0, 1.0]])
                u = u @ rot.T
            out.append(self.centre + Rs * u)
        return np.vstack(out) if out else np.zeros((0, 3))


# --------------------------------------------------------------------------------------
# triangle meshes
# --------------------------------------------------------------------------------------

def _orient2(ux, uy, vx, vy, qx, qy):
    return (vx - ux) * (qy - uy) - (vy - uy) * (qx - ux)


def _edge_side(ax, ay, bx, by, qx, qy):
    """Side (+1 / -1) of q w.r.t. directed edge a->b, never 0.

    The edge is evaluated in a canonical direction (lexicographically smaller
    end first) so a shared edge gives exactly opposite answers to its two
    triangles, and a point on the edge is nudged by (e, e^2) so it lies on
    exactly one side (ray parity stays consistent).
    """
    swap = (bx < ax) | ((bx == ax) & (by < ay))
    ux = np.where(swap, bx, ax)
    uy = np.where(swap, by, ay)
    vx = np.where(swap, ax, bx)
    vy = np.where(swap, ay, by)
    s = _orient2(ux, uy, vx, vy, qx, qy)
    dy = vy - uy
    dx = vx - ux
    tie = np.where(dy != 0, -np.sign(dy), np.sign(dx))
    s = np.where(s != 0, np.sign(s), tie)
    return np.where(swap, -s, s)


@dataclass(frozen=True, eq=False)
class TriangleMesh:
    """The solid enclosed by a closed triangle surface, optionally inflated.

    ``vertices`` (V,3) float, ``triangles`` (F,3) int. Exact duplicate
    vertices are merged and triangles that repeat a vertex dropped; the
    surface must then be closed (every edge used by an even number of
    triangles, so ray parity is well defined). Orientation does not matter.
    ``inflation`` >= 0 is the distance the solid is grown by (tests use
    "within ``inflation`` of the solid").
    """

    vertices: np.ndarray
    triangles: np.ndarray
    inflation: float = 0.0
    name: str = ""
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        v = np.asarray(self.vertices, np.float64)
        f = np.asarray(self.triangles)
        where = f" ({self.name})" if self.name else ""
        if v.ndim != 2 or v.shape[1] != 3:
            raise BuildError(f"triangle mesh{where}: vertices must be (V,3), got {v.shape}")
        if f.ndim != 2 or f.shape[1] != 3:
            raise BuildError(f"triangle mesh{where}: triangles must be (F,3), got {f.shape}")
        if not np.isfinite(v).all():
            raise BuildError(f"triangle mesh{where}: vertices contain NaN or infinity")
        if len(f) and not np.issubdtype(f.dtype, np.integer):
            if not np.all(np.mod(f, 1) == 0):
                raise BuildError(f"triangle mesh{where}: triangle indices must be integers")
        f = f.astype(np.int64)
        if len(f) and (f.min() < 0 or f.max() >= len(v)):
            raise BuildError(f"triangle mesh{where}: triangle indices must be in 0..{len(v) - 1}")
        r = float(self.inflation)
        if not (math.isfinite(r) and r >= 0):
            raise BuildError(f"triangle mesh{where}: inflation must be >= 0, got {self.inflation}")
        if len(v):
            uv, inv = np.unique(v, axis=0, return_inverse=True)
            f = inv.reshape(-1)[f]
            v = uv
        f = f[(f[:, 0] != f[:, 1]) & (f[:, 1] != f[:, 2]) & (f[:, 0] != f[:, 2])]
        if len(f) == 0:
            raise BuildError(f"triangle mesh{where}: no (non-degenerate) triangles")
        e = np.sort(np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]]), axis=1)
        _, cnt = np.unique(e[:, 0] * len(v) + e[:, 1], return_counts=True)
        odd = int(np.count_nonzero(cnt % 2))
        if odd:
            raise BuildError(f"triangle mesh{where} is not closed: {odd} edges are used by an "
                             "odd number of triangles (an obstacle must be a closed surface)")
        used = np.unique(f)
        remap = np.full(len(v), -1, np.int64)
        remap[used] = np.arange(len(used))
        v = v[used]
        f = remap[f]
        v.setflags(write=False)
        f.setflags(write=False)
        object.__setattr__(self, "vertices", v)
        object.__setattr__(self, "triangles", f)
        object.__setattr__(self, "inflation", r)

    def __repr__(self):
        return (f"TriangleMesh({len(self.vertices)} vertices, {len(self.triangles)} triangles"
                + (f", inflation={self.inflation:g}" if self.inflation else "")
                + (f", name={self.name!r}" if self.name else "") + ")")

    # -- derived arrays --------------------------------------------------------------

    @property
    def tri_points(self):
        if "tp" not in self._cache:
            self._cache["tp"] = self.vertices[self.triangles]
        return self._cache["tp"]

    def _tri_bounds(self):
        if "tb" not in self._cache:
            tp = self.tri_points
            self._cache["tb"] = (tp.min(axis=1), tp.max(axis=1))
        return self._cache["tb"]

    def inflated(self, r):
        """The same surface, grown by a further ``r`` >= 0."""
        r = float(r)
        if not r >= 0:
            raise BuildError(f"inflation must be >= 0, got {r}")
        if r == 0:
            return self
        return TriangleMesh(self.vertices, self.triangles, self.inflation + r, self.name)

    def bounds(self):
        lo = self.vertices.min(axis=0) - self.inflation
        hi = self.vertices.max(axis=0) + self.inflation
        return lo, hi

    @property
    def size(self):
        """The diagonal of the surface's bounding box (not inflated)."""
        return float(np.linalg.norm(self.vertices.max(axis=0) - self.vertices.min(axis=0)))

    # -- point queries ----------------------------------------------------------------

    def inside_surface(self, points):
        """(N,) bool: points inside the closed surface (not inflated), by the
        parity of crossings of a ray going up the z axis."""
        p = _as_points(points)
        out = np.zeros(len(p), bool)
        vlo = self.vertices.min(axis=0)
        vhi = self.vertices.max(axis=0)
        cand = np.nonzero(np.all((p >= vlo) & (p <= vhi), axis=1))[0]
        if len(cand) == 0:
            return out
        q = p[cand]
        tp = self.tri_points
        tlo, thi = self._tri_bounds()
        blo = np.column_stack([tlo[:, :2], np.full(len(tp), vlo[2])])
        bhi = thi
        crossings = np.zeros(len(q), np.int64)
        for t, i in box_point_pairs(blo, bhi, q):
            for s in range(0, len(t), PAIR_CHUNK):
                tt, ii = t[s:s + PAIR_CHUNK], i[s:s + PAIR_CHUNK]
                a, b, c = tp[tt, 0], tp[tt, 1], tp[tt, 2]
                qx, qy, qz = q[ii, 0], q[ii, 1], q[ii, 2]
                s1 = _edge_side(a[:, 0], a[:, 1], b[:, 0], b[:, 1], qx, qy)
                s2 = _edge_side(b[:, 0], b[:, 1], c[:, 0], c[:, 1], qx, qy)
                s3 = _edge_side(c[:, 0], c[:, 1], a[:, 0], a[:, 1], qx, qy)
                hit = (s1 == s2) & (s2 == s3)
                if not hit.any():
                    continue
                # height of the triangle's plane above q
                area = _orient2(a[:, 0], a[:, 1], b[:, 0], b[:, 1], c[:, 0], c[:, 1])
                hit &= area != 0
                with np.errstate(invalid="ignore", divide="ignore"):
                    w0 = _orient2(b[:, 0], b[:, 1], c[:, 0], c[:, 1], qx, qy) / area
                    w1 = _orient2(c[:, 0], c[:, 1], a[:, 0], a[:, 1], qx, qy) / area
                    w2 = 1.0 - w0 - w1
                    z = w0 * a[:, 2] + w1 * b[:, 2] + w2 * c[:, 2]
                hit &= z > qz
                np.add.at(crossings, ii[hit], 1)
        out[cand] = crossings % 2 == 1
        return out

    def surface_distance(self, points, max_distance=np.inf):
        """(N,) exact distance to the surface where it is <= ``max_distance``, else inf."""
        p = _as_points(points)
        out = np.full(len(p), np.inf)
        if not np.isfinite(max_distance):
            tp = self.tri_points
            step = max(1, 2_000_000 // max(len(tp), 1))
            for s in range(0, len(p), step):
                q = p[s:s + step, None, :]
                d = point_triangle_distance(q, tp[None, :, 0], tp[None, :, 1], tp[None, :, 2])
                out[s:s + step] = d.min(axis=1)
            return out
        tlo, thi = self._tri_bounds()
        tp = self.tri_points
        for t, i in box_point_pairs(tlo - max_distance, thi + max_distance, p):
            for s in range(0, len(t), PAIR_CHUNK):
                tt, ii = t[s:s + PAIR_CHUNK], i[s:s + PAIR_CHUNK]
                d = point_triangle_distance(p[ii], tp[tt, 0], tp[tt, 1], tp[tt, 2])
                np.minimum.at(out, ii, d)
        out[out > max_distance] = np.inf
        return out

    def signed_distance(self, points):
        """Exact signed distance to the inflated solid's boundary (negative inside)."""
        p = _as_points(points)
        d = self.surface_distance(p)
        inside = self.inside_surface(p)
        return np.where(inside, -d, d) - self.inflation

    def near(self, points, d):
        """(N,) bool: within distance ``d`` >= 0 of the inflated solid (inside counts)."""
        p = _as_points(points)
        reach = self.inflation + max(float(d), 0.0)
        close = self.surface_distance(p, reach) <= reach
        rest = ~close
        if rest.any():
            close[rest] = self.inside_surface(p[rest])
        return close

    def contains(self, points, r=0.0):
        """(N,) bool: points in the closed inflated solid, grown by a further ``r``."""
        return self.near(points, r)

    def distance_lower_bound(self, points):
        """A cheap lower bound of the distance to the inflated solid: the
        distance to its bounding box."""
        p = _as_points(points)
        lo, hi = self.bounds()
        g = np.maximum(np.maximum(lo - p, p - hi), 0.0)
        return np.linalg.norm(g, axis=1)

    # -- tetrahedra -------------------------------------------------------------------

    def tet_distance(self, tet_points, max_distance=0.0):
        """(T,) distance from each tet to the inflated solid: exact where it is
        at most ``max_distance``, inf beyond (0 when they meet)."""
        tp = _as_tets(tet_points)
        out = np.full(len(tp), np.inf)
        if len(tp) == 0:
            return out
        r = self.inflation
        tlo, thi = tet_bounds(tp)
        slo, shi = self._tri_bounds()
        tri = self.tri_points
        for i, j in aabb_pairs(tlo, thi, slo, shi, pad=r + max_distance):
            for s in range(0, len(i), PAIR_CHUNK):
                ii, jj = i[s:s + PAIR_CHUNK], j[s:s + PAIR_CHUNK]
                d = tet_triangle_distance(tp[ii], tri[jj])
                np.minimum.at(out, ii, np.maximum(d - r, 0.0))
        self._inside_tets(tp, out)
        out[out > max_distance] = np.inf
        return out

    def tets_intersect(self, tet_points, r=0.0):
        """(T,) bool: does each closed tet meet the inflated solid, grown by a
        further ``r`` >= 0? (exact)

        A tet meets it when it meets a triangle (separating axes), comes
        within the inflation distance of one (exact tet/triangle distance),
        or lies inside the surface (its centroid is, when it meets no
        triangle).
        """
        tp = _as_tets(tet_points)
        r = float(r)
        if self.inflation + r > 0:
            return self.tet_distance(tp, r) <= r
        out = np.full(len(tp), np.inf)
        if len(tp) == 0:
            return np.zeros(0, bool)
        tlo, thi = tet_bounds(tp)
        slo, shi = self._tri_bounds()
        tri = self.tri_points
        for i, j in aabb_pairs(tlo, thi, slo, shi):
            for s in range(0, len(i), PAIR_CHUNK):
                ii, jj = i[s:s + PAIR_CHUNK], j[s:s + PAIR_CHUNK]
                hit = tet_triangle_intersect(tp[ii], tri[jj])
                out[ii[hit]] = 0.0
        self._inside_tets(tp, out)
        return out <= 0.0

    def _inside_tets(self, tp, out):
        """Set ``out`` to 0 for tets that meet no triangle but lie inside."""
        lo = self.vertices.min(axis=0)
        hi = self.vertices.max(axis=0)
        cen = tp.mean(axis=1)
        cand = np.nonzero((out > 0) & np.all((cen >= lo) & (cen <= hi), axis=1))[0]
        if len(cand):
            out[cand[self.inside_surface(cen[cand])]] = 0.0

    # -- sampling ---------------------------------------------------------------------

    def _normals(self):
        tp = self.tri_points
        n = np.cross(tp[:, 1] - tp[:, 0], tp[:, 2] - tp[:, 0])
        ln = np.linalg.norm(n, axis=1)
        # orient outwards: the mesh may come either way round, so decide per
        # triangle by probing just off its centroid
        good = ln > 0
        n[good] /= ln[good, None]
        cen = tp.mean(axis=1)
        size = float(np.max(self.vertices.max(axis=0) - self.vertices.min(axis=0)))
        eps = 1e-6 * size
        probe = cen + eps * n
        flip = self.inside_surface(probe[good])
        idx = np.nonzero(good)[0]
        n[idx[flip]] *= -1
        return n, good

    def shell(self, spacing, rng, *, margin_frac=0.05):
        """Points just outside the inflated solid, about ``spacing`` apart.

        Vertices, points along edges and inside triangles, each pushed out
        along its (vertex, edge or face) normal by ``inflation + margin``,
        where margin = ``margin_frac * spacing``; points that land closer to
        the surface than that (concave places) are dropped, and the rest thinned
        to about one per ``spacing / 2`` box. Returns ``(points, margin)``.
        """
        spacing = float(spacing)
        margin = margin_frac * spacing
        r = self.inflation
        v = self.vertices
        f = self.triangles
        tp = self.tri_points
        n, good = self._normals()
        area = np.linalg.norm(np.cross(tp[:, 1] - tp[:, 0], tp[:, 2] - tp[:, 0]), axis=1) / 2
        # vertex normals: area-weighted sums of the faces' outward normals
        vn = np.zeros_like(v)
        for k in range(3):
            np.add.at(vn, f[:, k], n * area[:, None])
        pts = [v + self._unit(vn) * (r + margin)]
        # edges: unique, both faces' normals
        e = np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]])
        fe = np.tile(np.arange(len(f)), 3)
        es = np.sort(e, axis=1)
        key = es[:, 0] * len(v) + es[:, 1]
        uk, inv = np.unique(key, return_inverse=True)
        en = np.zeros((len(uk), 3))
        np.add.at(en, inv, n[fe])
        ea = v[uk // len(v)]
        eb = v[uk % len(v)]
        elen = np.linalg.norm(eb - ea, axis=1)
        m = np.ceil(elen / spacing).astype(np.int64)
        cnt = np.maximum(m - 1, 0)
        item, off = _expand(cnt)
        if len(item):
            t = (off + 1) / m[item]
            base = ea[item] + t[:, None] * (eb[item] - ea[item])
            pts.append(base + self._unit(en[item]) * (r + margin))
        if r > 0:
            # rounded edges of the inflated solid: the two faces' normals too
            ends = np.concatenate([ea, eb, (ea + eb) / 2])
            for k in range(2):
                fk = np.zeros(len(uk), np.int64)
                sel = np.nonzero(np.bincount(inv, minlength=len(uk)) > 0)[0]
                order = np.argsort(inv, kind="stable")
                starts = np.searchsorted(inv[order], sel)
                pick = order[np.minimum(starts + k, len(order) - 1)]
                fk[sel] = fe[pick]
                nn = np.tile(n[fk], (3, 1))
                pts.append(ends + nn * (r + margin))
        # triangle interiors: a barycentric grid per triangle
        tmax = np.max(np.linalg.norm(tp[:, [1, 2, 0]] - tp, axis=2), axis=1)
        mt = np.ceil(tmax / spacing).astype(np.int64)
        for mm in np.unique(mt[(mt >= 3) & good]):
            tri_ids = np.nonzero((mt == mm) & good)[0]
            ij = np.array([(i, j) for i in range(1, mm) for j in range(1, mm - i)], float)
            if len(ij) == 0:
                continue
            w1 = ij[:, 0] / mm
            w2 = ij[:, 1] / mm
            w0 = 1.0 - w1 - w2
            sub = tp[tri_ids]
            q = (w0[None, :, None] * sub[:, None, 0] + w1[None, :, None] * sub[:, None, 1]
                 + w2[None, :, None] * sub[:, None, 2])
            q = q + n[tri_ids][:, None, :] * (r + margin)
            pts.append(q.reshape(-1, 3))
        if r > 0 and len(f):
            pts.append(tp.mean(axis=1)[good] + n[good] * (r + margin))
        pts = np.concatenate(pts)
        # keep points that really are outside, at least half the margin clear
        keep = self.surface_distance(pts, r + 0.5 * margin) > r + 0.5 * margin
        keep &= ~self.inside_surface(pts)
        pts = pts[keep]
        # thin: one point per box of spacing/2 (earlier kinds win)
        cell = 0.5 * spacing
        keyc = np.floor(pts / cell).astype(np.int64)
        _, first = np.unique(keyc, axis=0, return_index=True)
        pts = pts[np.sort(first)]
        return pts, margin

    def shell_points(self, r, spacing, offsets):
        """(N,3) points around the solid grown by ``r``: for each ``eps`` in
        ``offsets`` a layer at distance ``eps * (size / 4 + r)`` outside it,
        about ``spacing`` apart (see :meth:`shell`). Deterministic."""
        scale = 0.25 * self.size + float(r)
        grown = self.inflated(float(r))
        out = []
        for eps in offsets:
            margin = max(float(eps) * scale, 1e-9 * max(scale, 1.0))
            pts, _ = grown.shell(spacing, None, margin_frac=margin / float(spacing))
            out.append(pts)
        return np.vstack(out) if out else np.zeros((0, 3))

    @staticmethod
    def _unit(x):
        ln = np.linalg.norm(x, axis=1, keepdims=True)
        return np.where(ln > 0, x / np.where(ln > 0, ln, 1.0), 0.0)


# --------------------------------------------------------------------------------------
# all obstacles at once
# --------------------------------------------------------------------------------------

def tets_intersect_obstacles(tet_points, obstacles, r=0.0):
    """(T,) bool: does each tetrahedron meet any obstacle grown by ``r`` (the
    agent's radius)? Exact, closed sets. Spheres are tested together in one
    vectorised pass, triangle meshes one by one."""
    tp = _as_tets(tet_points)
    r = float(r)
    hit = np.zeros(len(tp), bool)
    spheres = [o for o in obstacles if isinstance(o, Sphere)]
    if spheres:
        c = np.array([s.centre for s in spheres])
        rad = np.array([s.radius for s in spheres]) + r
        hit |= tets_intersect_spheres(tp, c, rad)
    for o in obstacles:
        if not isinstance(o, Sphere):
            rest = np.nonzero(~hit)[0]
            if len(rest):
                hit[rest] |= o.tets_intersect(tp[rest], r)
    return hit


def obstacles_contain(obstacles, points, r=0.0):
    """(N,) bool: points inside (or on) any obstacle grown by ``r``."""
    return points_in_obstacles(points, list(obstacles), r)


def points_in_obstacles(points, obstacles, d=0.0):
    """(N,) bool: points within ``d`` of any obstacle (inside counts)."""
    p = _as_points(points)
    out = np.zeros(len(p), bool)
    spheres = [o for o in obstacles if isinstance(o, Sphere)]
    if spheres:
        c = np.array([s.centre for s in spheres])
        r = np.array([s.radius for s in spheres])
        lo = c - r[:, None] - d
        hi = c + r[:, None] + d
        for j, i in box_point_pairs(lo, hi, p):
            sel = ~out[i]
            j, i = j[sel], i[sel]
            ok = np.linalg.norm(p[i] - c[j], axis=1) <= r[j] + d
            out[i[ok]] = True
    for o in obstacles:
        if not isinstance(o, Sphere):
            rest = np.nonzero(~out)[0]
            if len(rest):
                out[rest] |= o.near(p[rest], d)
    return out


# --------------------------------------------------------------------------------------
# fields and files
# --------------------------------------------------------------------------------------

def random_asteroid_field(n=40, seed=0, half_extent=50_000.0, *, centre=(0.0, 0.0, 0.0)):
    """A deterministic asteroid field: ``n`` spheres in the cube
    ``centre +- half_extent``.

    Radii run from 2 % to 16 % of ``half_extent`` (1-8 km in a 100 km cube),
    more small ones than large. About a third of the asteroids are scattered
    alone; the rest gather in clusters, each placed against an earlier member
    of its cluster — some overlapping it, some touching it exactly, some a
    little apart. Centres stay inside the cube, so some asteroids poke out.
    """
    n = int(n)
    if n < 0:
        raise BuildError(f"asteroid count must be >= 0, got {n}")
    h = float(half_extent)
    if not (math.isfinite(h) and h > 0):
        raise BuildError(f"half extent must be > 0, got {half_extent}")
    c0 = np.asarray(centre, np.float64).reshape(3)
    rng = np.random.default_rng(seed)
    rmin, rmax = 0.02 * h, 0.16 * h
    radii = rmin + (rmax - rmin) * rng.random(n) ** 1.6
    n_clusters = max(1, int(round(n / 9)))
    cluster_centres = rng.uniform(-0.7 * h, 0.7 * h, (n_clusters, 3))
    members = [[] for _ in range(n_clusters)]
    out = []
    for i in range(n):
        r = float(radii[i])
        if rng.random() < 0.35 or i == 0:
            c = rng.uniform(-h, h, 3)
        else:
            k = int(rng.integers(n_clusters))
            if not members[k]:
                c = cluster_centres[k] + rng.normal(0.0, 0.04 * h, 3)
            else:
                other = out[members[k][int(rng.integers(len(members[k])))]]
                u = rng.normal(size=3)
                u /= np.linalg.norm(u)
                mode = rng.random()
                if mode < 0.25:
                    f = 1.0                               # touching
                elif mode < 0.55:
                    f = rng.uniform(0.55, 0.95)           # overlapping
                else:
                    f = rng.uniform(1.05, 1.9)            # a gap
                c = (other.centre - c0) + u * (other.radius + r) * f
            members[k].append(i)
        c = np.clip(c, -h, h)
        out.append(Sphere(c0 + c, r))
    return out


def _num(text, where):
    try:
        x = float(text)
    except ValueError:
        raise BuildError(f"{where}: not a number: {text!r}") from None
    if not math.isfinite(x):
        raise BuildError(f"{where}: not a finite number: {text!r}")
    return x


def _sphere_from(x, y, z, r, where):
    if not r > 0:
        raise BuildError(f"{where}: radius must be > 0, got {r:g}")
    return Sphere((x, y, z), r)


def load_spheres(path):
    """Sphere obstacles from a CSV or JSON file.

    CSV: one sphere a line, columns ``x,y,z,radius`` (commas, or blanks), one
    optional header line naming the columns (any order; ``r`` for radius);
    blank lines and ``#`` comments are skipped. JSON: a list of objects with
    keys ``x``, ``y``, ``z``, ``radius`` (or ``r``). Raises :class:`BuildError`
    naming the file and line on bad input.
    """
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8-sig") as fh:
            text = fh.read()
    except OSError as e:
        raise BuildError(f"{path}: cannot read sphere file: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise BuildError(f"{path}: not a text file") from None
    stripped = text.lstrip()
    if path.lower().endswith(".json") or stripped[:1] in ("[", "{"):
        return _spheres_json(path, text)
    return _spheres_csv(path, text)


def _spheres_json(path, text):
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise BuildError(f"{path}: line {e.lineno}: invalid JSON: {e.msg}") from None
    if isinstance(data, dict) and isinstance(data.get("spheres"), list):
        data = data["spheres"]
    if not isinstance(data, list):
        raise BuildError(f"{path}: JSON must be a list of objects with x, y, z, radius")
    out = []
    for i, item in enumerate(data):
        where = f"{path}: sphere {i}"
        if not isinstance(item, dict):
            raise BuildError(f"{where}: expected an object with x, y, z, radius")
        rkey = "radius" if "radius" in item else "r"
        missing = [k for k in ("x", "y", "z", rkey) if k not in item]
        if missing:
            raise BuildError(f"{where}: missing key(s) {', '.join(missing)}")
        vals = []
        for k in ("x", "y", "z", rkey):
            v = item[k]
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise BuildError(f"{where}: {k} must be a number, got {v!r}")
            if not math.isfinite(v):
                raise BuildError(f"{where}: {k} must be finite, got {v!r}")
            vals.append(float(v))
        out.append(_sphere_from(*vals, where))
    return out


def _spheres_csv(path, text):
    out = []
    cols = None
    seen_data = False
    for lineno, raw in enumerate(io.StringIO(text), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if "," in line:
            fields = [f.strip() for f in next(csv.reader([line]))]
        else:
            fields = line.replace(";", " ").split()
        where = f"{path}: line {lineno}"
        if cols is None and not seen_data:
            try:
                [float(f) for f in fields]
            except ValueError:
                names = [f.lower() for f in fields]
                names = ["radius" if f == "r" else f for f in names]
                missing = [k for k in ("x", "y", "z", "radius") if k not in names]
                if missing:
                    raise BuildError(f"{where}: header must name columns x, y, z, radius; "
                                     f"missing {', '.join(missing)}") from None
                cols = [names.index(k) for k in ("x", "y", "z", "radius")]
                continue
        seen_data = True
        idx = cols or [0, 1, 2, 3]
        if len(fields) < max(idx) + 1 or (cols is None and len(fields) != 4):
            raise BuildError(f"{where}: expected 4 columns x, y, z, radius, got {len(fields)}")
        x, y, z, r = (_num(fields[k], where) for k in idx)
        out.append(_sphere_from(x, y, z, r, where))
    return out


_SURFACE_CELLS = {"triangle"}
_IGNORED_CELLS = {"vertex", "line", "line3"}


def load_obstacle_mesh(path, inflation=0.0):
    """A :class:`TriangleMesh` obstacle from any surface file meshio reads
    (.obj, .ply, .stl, .off, ...). Only triangle faces are accepted (points and
    lines are ignored); the surface must be closed. Raises :class:`BuildError`."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise BuildError(f"{path}: no such obstacle mesh file")
    import meshio
    try:
        m = meshio.read(path)
    except Exception as e:  # meshio raises many kinds of errors on bad input
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise BuildError(f"{path}: cannot read obstacle mesh: {msg}") from None
    pts = np.asarray(m.points, np.float64)
    if pts.ndim != 2 or pts.shape[1] not in (2, 3):
        raise BuildError(f"{path}: unexpected point array of shape {pts.shape}")
    if pts.shape[1] == 2:
        raise BuildError(f"{path}: a 2D mesh; an obstacle needs 3D points")
    tris = []
    other = set()
    for block in m.cells:
        if block.type in _SURFACE_CELLS:
            tris.append(np.asarray(block.data, np.int64).reshape(-1, 3))
        elif block.type not in _IGNORED_CELLS:
            other.add(block.type)
    if other:
        raise BuildError(f"{path}: only triangle faces are supported, found "
                         f"{', '.join(sorted(other))} cells (triangulate the mesh first)")
    if not tris:
        raise BuildError(f"{path}: no triangles in the file")
    return TriangleMesh(pts, np.concatenate(tris), inflation,
                        name=os.path.basename(path))
