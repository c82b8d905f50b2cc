"""Uniform samples of the navigable volume and connected components."""

from __future__ import annotations

import numpy as np

from ..common import scratch
from ...errors import QueryError


def random_points(mesh, n, seed=None) -> np.ndarray:
    """(n,3) points uniform in the volume: tetrahedron chosen with probability
    proportional to its volume, then a uniform (Dirichlet(1,1,1,1)) barycentric.
    (Over the positions with some clearance: :func:`regn.query.radius.free_space.random_free`.)"""
    n = whole_count(n)
    rng = np.random.default_rng(seed)
    vol = np.asarray(mesh.tet_volumes, dtype=np.float64)
    vol = np.where(np.isfinite(vol), vol, 0.0)
    if n == 0:
        return np.zeros((0, 3))
    if vol.sum() <= 0:
        raise QueryError("the mesh has no volume to sample")
    t = rng.choice(len(vol), size=n, p=vol / vol.sum())
    w = rng.exponential(size=(n, 4))
    w /= w.sum(axis=1, keepdims=True)
    return np.einsum("nk,nkd->nd", w, np.asarray(mesh.tet_points)[t])


def whole_count(n) -> int:
    """A number of points asked for, as an int >= 0, or QueryError."""
    try:
        k = int(n)
        if k != n:                       # 2.5 is not a count
            raise ValueError
    except (TypeError, ValueError, OverflowError):
        raise QueryError(f"n must be a whole number, not {n!r}") from None
    if k < 0:
        raise QueryError("n must be >= 0")
    return k


def components(mesh) -> np.ndarray:
    """(T,) int64 connected-component label of each tetrahedron (face adjacency)."""
    s = scratch(mesh)
    if "components" not in s:
        from ...geometry.graph import components as tet_components
        lab = tet_components(mesh.neighbors)[1]
        lab.flags.writeable = False
        s["components"] = lab
    return s["components"]
