"""The grid of a world's tiles: float32-exact planes, tile boxes, which tile holds a point."""

from __future__ import annotations

import itertools

import numpy as np

from ..errors import BuildError


def f32(x):
    """float64 values rounded to float32 (what a REGN stores)."""
    return np.asarray(x, np.float64).astype(np.float32).astype(np.float64)


#: Inner tile planes fall on multiples of this many float32 steps.
PLANE_STEPS = 16


def plane_step(lo, hi):
    """(3,) the step inner tile planes fall on: :data:`PLANE_STEPS` float32
    steps of each axis's largest coordinate. A tile whose box is on such
    steps has an extent that whole cell counts (1, 2, 4 ...) divide
    exactly: its REGN's grid frame is its box as the manifest says."""
    big = np.maximum(np.abs(np.asarray(lo, np.float64)), np.abs(np.asarray(hi, np.float64)))
    return PLANE_STEPS * np.spacing(big.astype(np.float32)).astype(np.float64)


class TileGrid:
    """``n`` (3,) tiles per axis over the box ``lo``..``hi``; every tile
    boundary is float32-exact (a tile's REGN box is its box exactly)."""

    def __init__(self, lo, hi, n):
        self.lo = np.asarray(lo, np.float64).reshape(3)
        self.hi = np.asarray(hi, np.float64).reshape(3)
        self.n = tuple(int(v) for v in n)
        if any(v < 1 for v in self.n):
            raise BuildError(f"tiles per axis must be >= 1, got {self.n}")
        self.planes = []
        q = plane_step(self.lo, self.hi)        # inner planes on its multiples
        for k in range(3):
            e = np.linspace(self.lo[k], self.hi[k], self.n[k] + 1)
            e = f32(np.round(e / q[k]) * q[k])
            e[0], e[-1] = self.lo[k], self.hi[k]
            if np.any(np.diff(e) <= 0):
                raise BuildError(f"{self.n[k]} tiles along axis {k} are too thin for "
                                 "float32 coordinates")
            self.planes.append(e)

    def indices(self):
        """Every tile's (i, j, k), in C order."""
        return list(itertools.product(*(range(v) for v in self.n)))

    def box(self, idx):
        """``(lo, hi)`` (3,) of tile ``idx``."""
        lo = np.array([self.planes[k][idx[k]] for k in range(3)])
        hi = np.array([self.planes[k][idx[k] + 1] for k in range(3)])
        return lo, hi

    @property
    def tile_extent(self):
        """(3,) the largest tile's extent along each axis."""
        return np.array([np.diff(p).max() for p in self.planes])

    def tile_of(self, points):
        """(N,3) int64 grid index of the tile holding each point (a point on
        a shared wall: the upper tile); -1 rows outside the world."""
        p = np.asarray(points, np.float64).reshape(-1, 3)
        out = np.empty(p.shape, np.int64)
        for k in range(3):
            i = np.searchsorted(self.planes[k], p[:, k], side="right") - 1
            out[:, k] = np.where(p[:, k] == self.hi[k], self.n[k] - 1, i)
        bad = ~np.all((p >= self.lo) & (p <= self.hi), axis=1)
        out[bad] = -1
        return out

    @classmethod
    def from_planes(cls, lo, hi, planes):
        """The grid whose tile boundaries along each axis are ``planes[k]``."""
        grid = cls.__new__(cls)
        grid.lo, grid.hi = np.asarray(lo, np.float64), np.asarray(hi, np.float64)
        grid.planes = [np.asarray(p, np.float64) for p in planes]
        grid.n = tuple(len(p) - 1 for p in grid.planes)
        return grid
