"""The tile grid, and the points on tile walls: the same for both tiles of a wall.

Two neighbouring tiles are built apart, each a Delaunay tetrahedralisation
of its own sample. The triangles of a tile's wall are the 2-D Delaunay
triangulation of the sample points on that wall (a face of the convex hull
of a 3-D Delaunay triangulation is triangulated by the empty-circle rule of
its own points), so two tiles whose samples hold the *same* points on their
shared wall get the same triangles there, and a path crosses from one to
the other through them (:mod:`regn.world.links` pairs them).

So the wall points are never the tile's own: each is a function of the
plane alone (and the obstacles, the detail and the seed), computed once
per wall rectangle, edge and corner of the grid, and handed to both tiles
(``boundary=`` of :func:`regn.generate`):

* corners: every grid node;
* an edge (a segment between two grid nodes): a lattice along it, jittered
  along it only, plus where each inflated sphere's shell crosses it;
* a wall rectangle: a lattice jittered in its plane, kept a little away
  from its edges, plus a ring where each inflated sphere's shell crosses
  the plane (the points nudged outward by up to 1e-3 of the ring's radius,
  so no four are on one circle and the empty-circle triangulation is
  unique);

points inside an inflated obstacle dropped, positions rounded to float32
(what the file stores). The random jitter of each piece is seeded by the
world's seed and the piece's grid address, so the same piece gets the same
points whoever asks.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

from ..builder.obstacles import Sphere
from ..builder.world import BASE_LATTICE, BASE_SHELL_FRAC, _sphere_plan
from ..errors import BuildError
from ..tolerances import SAMPLE_MERGE_REL
from .grid import TileGrid, f32 as _f32

__all__ = ["WallSampler", "TileGrid"]

#: How far from its edges a wall rectangle's own points stay (of its spacing).
EDGE_KEEP_OUT = 0.05
#: Lattice jitter (of a lattice cell) along a wall or an edge.
JITTER = 0.3
#: The outward nudge of a ring's points (of the ring's radius), at most.
RING_NUDGE = 1e-3


class WallSampler:
    """The wall points of every tile of a :class:`TileGrid` (module docstring)."""

    def __init__(self, grid, obstacles, *, agent_radius=0.0, detail=1.0, seed=0,
                 lattice_detail=None):
        self.grid = grid
        self.seed = int(seed)
        detail = float(detail)
        ext = grid.tile_extent
        # the shells' spacing cap (and the edge keep-out) follow the detail,
        # the walls' lattice the lattice detail (at most the detail)
        self.h = float(ext.max()) / (BASE_LATTICE * detail ** (1 / 3))
        lattice = detail if lattice_detail is None else min(float(lattice_detail), detail)
        self.lattice_h = float(ext.max()) / (BASE_LATTICE * lattice ** (1 / 3))
        self.merge = SAMPLE_MERGE_REL * float(np.linalg.norm(ext))
        inflated = [ob.inflated(agent_radius) for ob in obstacles]
        spheres = [ob for ob in inflated if isinstance(ob, Sphere)]
        self.others = [ob for ob in inflated if not isinstance(ob, Sphere)]
        self.other_bounds = [ob.bounds() for ob in self.others]
        self.centres = np.array([s.centre for s in spheres], np.float64).reshape(-1, 3)
        self.radii = np.array([s.radius for s in spheres], np.float64)
        frac = BASE_SHELL_FRAC / np.sqrt(detail)
        shell = np.zeros(len(spheres))
        spacing = np.zeros(len(spheres))
        for i, R in enumerate(self.radii):
            s = min(max(frac * R, 1e-6 * float(ext.max())), self.h)
            _, offset, spacing[i] = _sphere_plan(R, s)
            shell[i] = R * (1 + offset)
        self.shell, self.spacing = shell, spacing
        self._cache = {}

    # --- the pieces --------------------------------------------------------------
    def _rng(self, *key):
        return np.random.default_rng([self.seed, *key])

    def _clean(self, pts, lo, hi):
        """Points outside every inflated obstacle, float32, merged (first kept)."""
        pts = _f32(pts.reshape(-1, 3))
        if len(pts) and len(self.radii):
            near = np.all((self.centres + self.radii[:, None] >= lo) &
                          (self.centres - self.radii[:, None] <= hi), axis=1)
            for c, r in zip(self.centres[near], self.radii[near]):
                pts = pts[((pts - c) ** 2).sum(axis=1) > r * r]
        for ob, (blo, bhi) in zip(self.others, self.other_bounds):
            if len(pts) and np.all(bhi >= lo) and np.all(blo <= hi):
                pts = pts[~ob.contains(pts)]
        if len(pts) > 1:
            pairs = cKDTree(pts).query_pairs(self.merge, output_type="ndarray")
            if len(pairs):
                keep = np.ones(len(pts), bool)
                keep[np.maximum(pairs[:, 0], pairs[:, 1])] = False
                pts = pts[keep]
        return pts

    def edge(self, e, pu, pv, ie):
        """Points strictly inside grid edge: along axis ``e``, segment ``ie``,
        on the planes ``pu``, ``pv`` of the other two axes (in order)."""
        key = ("e", e, pu, pv, ie)
        if key in self._cache:
            return self._cache[key]
        u, v = [k for k in range(3) if k != e]
        P = self.grid.planes
        e0, e1 = P[e][ie], P[e][ie + 1]
        n = max(1, int(round((e1 - e0) / self.lattice_h)))
        t = (np.arange(1, n) + self._rng(2, e, pu, pv, ie).uniform(-JITTER, JITTER, n - 1)) / n
        along = [e0 + (e1 - e0) * t]
        d2 = (self.centres[:, u] - P[u][pu]) ** 2 + (self.centres[:, v] - P[v][pv]) ** 2
        cut = d2 < self.shell ** 2
        half = np.sqrt(self.shell[cut] ** 2 - d2[cut])
        along += [self.centres[cut, e] - half, self.centres[cut, e] + half]
        s = np.concatenate(along)
        eps = EDGE_KEEP_OUT * (e1 - e0) / max(1, int(round((e1 - e0) / self.h)))
        s = s[(s > e0 + eps) & (s < e1 - eps)]
        pts = np.empty((len(s), 3))
        pts[:, e], pts[:, u], pts[:, v] = s, P[u][pu], P[v][pv]
        lo, hi = pts.min(axis=0) if len(pts) else 0, pts.max(axis=0) if len(pts) else 0
        self._cache[key] = out = self._clean(pts, lo, hi)
        return out

    def wall(self, ax, p, iu, iv):
        """Points strictly inside the wall rectangle on plane ``p`` of axis
        ``ax``, cell ``iu``, ``iv`` of the other two axes (in order)."""
        key = ("w", ax, p, iu, iv)
        if key in self._cache:
            return self._cache[key]
        u, v = [k for k in range(3) if k != ax]
        P = self.grid.planes
        c = P[ax][p]
        u0, u1, v0, v1 = P[u][iu], P[u][iu + 1], P[v][iv], P[v][iv + 1]
        nu = max(1, int(round((u1 - u0) / self.lattice_h)))
        nv = max(1, int(round((v1 - v0) / self.lattice_h)))
        rng = self._rng(1, ax, p, iu, iv)
        I, J = np.meshgrid(np.arange(1, nu), np.arange(1, nv), indexing="ij")
        jit = rng.uniform(-JITTER, JITTER, (2,) + I.shape)
        uu = [(u0 + (u1 - u0) * (I + jit[0]) / nu).ravel()]
        vv = [(v0 + (v1 - v0) * (J + jit[1]) / nv).ravel()]
        d = np.abs(self.centres[:, ax] - c)
        cut = np.flatnonzero((d < self.shell) &
                             (self.centres[:, u] + self.shell > u0) &
                             (self.centres[:, u] - self.shell < u1) &
                             (self.centres[:, v] + self.shell > v0) &
                             (self.centres[:, v] - self.shell < v1))
        for i in cut:
            rc = np.sqrt(self.shell[i] ** 2 - d[i] ** 2)
            m = int(np.clip(np.ceil(2 * np.pi * rc / self.spacing[i] * 1.2), 6, 2000))
            th = 2 * np.pi * np.arange(m) / m
            rr = rc * (1 + RING_NUDGE * rng.uniform(0, 1, m))
            uu.append(self.centres[i, u] + rr * np.cos(th))
            vv.append(self.centres[i, v] + rr * np.sin(th))
        uu, vv = np.concatenate(uu), np.concatenate(vv)
        eu = EDGE_KEEP_OUT * (u1 - u0) / max(1, int(round((u1 - u0) / self.h)))
        ev = EDGE_KEEP_OUT * (v1 - v0) / max(1, int(round((v1 - v0) / self.h)))
        inside = (uu > u0 + eu) & (uu < u1 - eu) & (vv > v0 + ev) & (vv < v1 - ev)
        pts = np.empty((int(inside.sum()), 3))
        pts[:, ax], pts[:, u], pts[:, v] = c, uu[inside], vv[inside]
        lo = np.array([u0, v0]), np.array([u1, v1])
        box_lo, box_hi = np.empty(3), np.empty(3)
        box_lo[ax] = box_hi[ax] = c
        box_lo[[u, v]], box_hi[[u, v]] = lo
        self._cache[key] = out = self._clean(pts, box_lo, box_hi)
        return out

    # --- a tile --------------------------------------------------------------------
    def tile(self, idx):
        """(M,3) float32-exact points on tile ``idx``'s six walls: its 8
        corners, 12 edges and 6 wall rectangles."""
        lo, hi = self.grid.box(idx)
        corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1])
                            for z in (lo[2], hi[2])])
        parts = [corners]
        for e in range(3):
            u, v = [k for k in range(3) if k != e]
            for pu in (idx[u], idx[u] + 1):
                for pv in (idx[v], idx[v] + 1):
                    parts.append(self.edge(e, pu, pv, idx[e]))
        for ax in range(3):
            u, v = [k for k in range(3) if k != ax]
            for p in (idx[ax], idx[ax] + 1):
                parts.append(self.wall(ax, p, idx[u], idx[v]))
        return np.vstack(parts)


# --- a level's walls ----------------------------------------------------------------------
#
# A level (regn.levels) is solid voxels. Its tiles are cut along voxel planes
# (``cuts[k]``: the voxel index of each tile boundary along axis k), and a
# tile's wall sample is the corners of the quadtree leaves of the free
# pixels of each wall rectangle (a pixel is free when a voxel on either
# side of it is), of the binary-tree leaves of each edge's free segments
# (free when one of the up-to-4 voxels around it is), and the 8 corners:
# coarse in the open and fine near the solid, from the voxels of the
# whole level (so both sides get the same points), at leaves of at least
# ``2 ** level`` voxels. Points strictly inside a rectangle are jittered in
# its plane, points strictly inside an edge along it, by the world's
# jitter; positions float32. A rectangle with no point inside gets its
# centre (its four corners alone are on one circle, and the two tiles
# could split it along different diagonals).


def _pool2(a):
    """One step of an "all free" pyramid over the last axes (1-D or 2-D),
    odd sizes padded with False."""
    pad = [(0, s % 2) for s in a.shape]
    if any(p[1] for p in pad):
        a = np.pad(a, pad, constant_values=False)
    shape = sum(((s // 2, 2) for s in a.shape), ())
    return a.reshape(shape).all(axis=tuple(range(1, 2 * a.ndim, 2)))


def tree_corners(mask, level):
    """(N, d) int64 unique corners (in pixels) of the leaves of at least
    ``2 ** level`` pixels of the all-free tree of ``mask`` (1-D or 2-D bool)."""
    levels = [np.asarray(mask, bool)]
    while max(levels[-1].shape) > 1:
        levels.append(_pool2(levels[-1]))
    shape0 = np.array(levels[0].shape)
    out = []
    d = levels[0].ndim
    offsets = np.array(list(np.ndindex(*(2,) * d)))
    for lev in range(len(levels) - 1, level - 1, -1):
        a = levels[lev]
        if lev + 1 < len(levels):
            up = levels[lev + 1]
            for ax in range(d):
                up = up.repeat(2, axis=ax)
            a = a & ~up[tuple(slice(0, s) for s in a.shape)]
        ijk = np.argwhere(a)
        if len(ijk):
            out.append(np.minimum((ijk[:, None, :] + offsets[None]) << lev, shape0)
                       .reshape(-1, d))
    if not out:
        return np.zeros((0, d), np.int64)
    return np.unique(np.concatenate(out), axis=0)


class LevelWallSampler:
    """The wall points of every tile of a level's world (see above):
    ``free`` the level's free voxels (uint8, on ``vgrid``), ``cuts`` the
    tile boundaries in voxels, ``grid`` the :class:`TileGrid` of them."""

    def __init__(self, grid, cuts, free, *, level=0, jitter, seed=0):
        self.grid, self.cuts, self.free = grid, [np.asarray(c) for c in cuts], free
        self.level, self.seed = int(level), int(seed)
        self.jitter = np.broadcast_to(np.asarray(jitter, np.float64), (3,))
        self._cache = {}

    def _layers(self, ax, p):
        """The voxel layers beside plane ``p`` of axis ``ax`` (one at the world's faces)."""
        c = int(self.cuts[ax][p])
        return [i for i in (c - 1, c) if 0 <= i < self.free.shape[ax]]

    def wall(self, ax, p, iu, iv):
        """Points strictly inside a wall rectangle (see :meth:`WallSampler.wall`)."""
        key = ("w", ax, p, iu, iv)
        if key in self._cache:
            return self._cache[key]
        u, v = [k for k in range(3) if k != ax]
        cu, cv = self.cuts[u][iu:iu + 2], self.cuts[v][iv:iv + 2]
        sl = [slice(None)] * 3
        sl[u], sl[v] = slice(cu[0], cu[1]), slice(cv[0], cv[1])
        mask = np.zeros((cu[1] - cu[0], cv[1] - cv[0]), bool)
        for layer in self._layers(ax, p):
            sl[ax] = layer
            mask |= self.free[tuple(sl)].astype(bool)
        jk = tree_corners(mask, self.level).astype(np.float64)
        n = np.array(mask.shape)
        jk = jk[np.all((jk > 0) & (jk < n), axis=1)]
        if not len(jk):
            # the rectangle's 4 corners are on one circle: a point inside
            # makes its triangulation the same for both tiles
            jk = n[None] / 2.0
        P = self.grid.planes
        (u0, u1), (v0, v1) = P[u][iu:iu + 2], P[v][iv:iv + 2]
        d = self._rng(1, ax, p, iu, iv).uniform(-1, 1, (len(jk), 2)) * self.jitter[[u, v]]
        pts = np.empty((len(jk), 3))
        pts[:, ax] = P[ax][p]
        pts[:, u] = u0 + (u1 - u0) * jk[:, 0] / n[0] + d[:, 0]
        pts[:, v] = v0 + (v1 - v0) * jk[:, 1] / n[1] + d[:, 1]
        self._cache[key] = out = _f32(pts)
        return out

    def edge(self, e, pu, pv, ie):
        """Points strictly inside a grid edge (see :meth:`WallSampler.edge`)."""
        key = ("e", e, pu, pv, ie)
        if key in self._cache:
            return self._cache[key]
        u, v = [k for k in range(3) if k != e]
        c0, c1 = self.cuts[e][ie:ie + 2]
        mask = np.zeros(c1 - c0, bool)
        sl = [slice(None)] * 3
        sl[e] = slice(c0, c1)
        for a in self._layers(u, pu):
            for b in self._layers(v, pv):
                sl[u], sl[v] = a, b
                mask |= self.free[tuple(sl)].astype(bool)
        s = tree_corners(mask, self.level)[:, 0]
        s = s[(s > 0) & (s < len(mask))]
        P = self.grid.planes
        e0, e1 = P[e][ie:ie + 2]
        pts = np.empty((len(s), 3))
        pts[:, e] = e0 + (e1 - e0) * s / len(mask) + \
            self._rng(2, e, pu, pv, ie).uniform(-1, 1, len(s)) * self.jitter[e]
        pts[:, u], pts[:, v] = P[u][pu], P[v][pv]
        self._cache[key] = out = _f32(pts)
        return out

    def _rng(self, *key):
        return np.random.default_rng([self.seed, *key])

    def tile(self, idx):
        """(M,3) float32-exact points on tile ``idx``'s walls (as
        :meth:`WallSampler.tile`)."""
        return WallSampler.tile(self, idx)

    def count(self, idx):
        """How many points :meth:`tile` gives (cached pieces)."""
        return len(self.tile(idx))
