"""How many sample points each tile of a grid will hold: what an automatic grid
is chosen by (:func:`regn.world.building.choose_grid`).

A tile's sample is its lattice (interior and walls; the interior only where
it is free), and the shell points of the spheres that fall in it and not
inside another sphere: each sphere's shell is drawn with at most
:data:`SHELL_DRAW` points (each standing for its share of the shell's
count), dropped where another sphere holds it and counted in the tile that
holds it. A triangle-mesh obstacle counts its whole shell in every tile its
bounds meet. An estimate, not a build: a tile past the format's limit still
lowers its own detail.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

from ..builder.obstacles import Sphere
from ..builder.world import BASE_LATTICE, BASE_SHELL_FRAC, _sphere_plan, shell_offset
from ..geometry.sampling import fibonacci_sphere

#: Points drawn a shell, at most, and free-space probes a tile.
SHELL_DRAW = 24
PROBES = 64
#: Neighbouring sphere centres tried for each shell point.
NEIGHBOURS = 8


def _tile_index(grid, p):
    return tuple(np.clip(np.searchsorted(grid.planes[k], p[:, k], "right") - 1, 0,
                         grid.n[k] - 1) for k in range(3))


def _spheres(obstacles, r):
    s = [ob for ob in obstacles if isinstance(ob, Sphere)]
    c = np.array([ob.centre for ob in s], np.float64).reshape(-1, 3)
    return c, np.array([ob.radius + r for ob in s], np.float64)


def _inside_others(tree, centres, radii, pts, own):
    """(N,) points strictly inside a sphere other than their own."""
    k = min(NEIGHBOURS, len(centres))
    d, i = tree.query(pts, k=k)
    d, i = d.reshape(len(pts), k), i.reshape(len(pts), k)
    return ((d < radii[i]) & (i != own[:, None])).any(axis=1)


def tile_samples(grid, shell_cap, obstacles, r, detail, lattice):
    """(n0,n1,n2) estimated sample points of each tile of ``grid`` at
    ``detail`` (shells, their spacing at most ``shell_cap`` metres) and
    ``lattice`` (the lattice's detail)."""
    ext = grid.tile_extent
    cells = BASE_LATTICE * lattice ** (1 / 3)
    n_lat = (cells + 1) ** 3
    n_wall = 6 * (cells + 1) ** 2
    frac = BASE_SHELL_FRAC / np.sqrt(detail)
    centres, radii = _spheres(obstacles, r)
    count = np.zeros(grid.n)
    tree = cKDTree(centres) if len(centres) else None
    # the lattice, where free
    n_tiles = int(np.prod(grid.n))
    probes = np.random.default_rng(0).uniform(0, 1, (n_tiles, PROBES, 3))
    boxes = [grid.box(idx) for idx in grid.indices()]
    lo = np.array([b[0] for b in boxes])[:, None, :]
    hi = np.array([b[1] for b in boxes])[:, None, :]
    probes = (lo + probes * (hi - lo)).reshape(-1, 3)
    free = np.ones(n_tiles)
    if tree is not None:
        free -= _inside_others(tree, centres, radii, probes,
                               np.full(len(probes), -1)).reshape(n_tiles, PROBES).mean(axis=1)
    count += (n_lat * free + n_wall).reshape(grid.n)
    # the shells, where not inside another sphere
    pts, weights, owner = [], [], []
    unit = {}
    for i, (c, R) in enumerate(zip(centres, radii)):
        n, _, _ = _sphere_plan(R, min(max(frac * R, 1e-6 * ext.max()), shell_cap))
        m = min(n, SHELL_DRAW)
        if m not in unit:
            unit[m] = fibonacci_sphere(m)
        pts.append(c + R * (1 + shell_offset(n)) * unit[m])
        weights.append(np.full(m, n / m))
        owner.append(np.full(m, i))
    if pts:
        p, w, own = np.vstack(pts), np.concatenate(weights), np.concatenate(owner)
        keep = np.all((p >= grid.lo) & (p <= grid.hi), axis=1)
        p, w, own = p[keep], w[keep], own[keep]
        keep = ~_inside_others(tree, centres, radii, p, own)
        np.add.at(count, _tile_index(grid, p[keep]), w[keep])
    for ob in obstacles:
        if isinstance(ob, Sphere):
            continue
        blo, bhi = (np.asarray(b, np.float64) for b in ob.bounds())
        R = 0.5 * float(np.linalg.norm(bhi - blo)) + r
        n = 4 * np.pi * R * R / (frac * R) ** 2 * 2.2
        i0 = _tile_index(grid, (blo - r)[None])
        i1 = _tile_index(grid, (bhi + r)[None])
        count[i0[0][0]:i1[0][0] + 1, i0[1][0]:i1[1][0] + 1, i0[2][0]:i1[2][0] + 1] += n
    return count
