"""Obstacles of a stage: the solids the navigable volume flows around.

Two kinds of obstacle fill a stage's box with holes:

* :class:`Sphere` — an asteroid, a closed ball;
* :class:`TriangleMesh` — any closed triangle surface (loaded from .obj, .ply,
  .stl, ... with :func:`regn.inputs.obstacles.load_obstacle_mesh`), the
  solid it encloses.

Either can be *inflated* by the agent's radius: a sphere grows, a triangle mesh
keeps its surface and remembers the distance, so "meets the inflated solid"
means "comes within that distance of the solid". :func:`random_asteroid_field`
(:mod:`regn.builder.obstacles`) makes a deterministic field of spheres.

Every test treats the sets as closed (touching counts), works on whole
batches, and is exact; the geometry itself (distances, separating axes,
candidate pairs, ray parity) lives beside this module in :mod:`regn.geometry`.
(Here, below the file loaders of :mod:`regn.inputs` and the builder, so that
both import it downward; :mod:`regn.builder.obstacles` re-exports it.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import BuildError
from .distance import (points_near_balls, points_triangles_distance,
                                 tets_ball_distance, tets_intersect_balls,
                                 tets_meet_triangles, tets_triangles_distance)
from .grid import expand_counts
from .surface import points_inside_surface


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
        return tets_intersect_balls(_as_tets(tet_points), self.centre.reshape(1, 3),
                                    [self.radius], float(r))

    def tet_distance(self, tet_points, max_distance=0.0):
        """(T,) distance from each tet to the ball: exact where it is at most
        ``max_distance``, inf beyond (0 when they meet)."""
        return tets_ball_distance(_as_tets(tet_points), self.centre.reshape(1, 3),
                                  [self.radius], max_distance)



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
        return points_inside_surface(_as_points(points), self.tri_points,
                                     *self._tri_bounds())

    def surface_distance(self, points, max_distance=np.inf):
        """(N,) exact distance to the surface where it is <= ``max_distance``, else inf."""
        return points_triangles_distance(_as_points(points), self.tri_points,
                                         *self._tri_bounds(), max_distance)

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
        r = self.inflation
        to_surface = tets_triangles_distance(tp, self.tri_points, *self._tri_bounds(),
                                             pad=r + max_distance)
        out = np.maximum(to_surface - r, 0.0)
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
        meets = tets_meet_triangles(tp, self.tri_points, *self._tri_bounds())
        out = np.where(meets, 0.0, np.inf)
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
        item, off = expand_counts(cnt)
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
    centres, radii, others = _by_kind(obstacles)
    hit = np.zeros(len(tp), bool)
    if len(radii):
        hit |= tets_intersect_balls(tp, centres, radii + r)
    for o in others:
        rest = np.nonzero(~hit)[0]
        if len(rest):
            hit[rest] |= o.tets_intersect(tp[rest], r)
    return hit


def obstacles_contain(obstacles, points, d=0.0):
    """(N,) bool: points (N,3) within ``d`` of any obstacle (inside counts)."""
    p = np.asarray(points, np.float64).reshape(-1, 3)
    centres, radii, others = _by_kind(obstacles)
    out = np.zeros(len(p), bool)
    if len(radii) and len(p):
        out |= points_near_balls(p, centres, radii, d)
    for o in others:
        rest = np.nonzero(~out)[0]
        if len(rest):
            out[rest] |= o.near(p[rest], d)
    return out


def _by_kind(obstacles):
    """``(centres (S,3), radii (S,), others)``: the spheres as arrays, the
    other obstacles in their order."""
    spheres = [o for o in obstacles if isinstance(o, Sphere)]
    return (np.array([s.centre for s in spheres], np.float64).reshape(-1, 3),
            np.array([s.radius for s in spheres], np.float64),
            [o for o in obstacles if not isinstance(o, Sphere)])
