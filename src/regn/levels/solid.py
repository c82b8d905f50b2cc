"""What is solid: a voxel grid over the level's box, decided without
trusting closure or winding.

1. Every voxel a triangle touches is solid (a conservative separating-axis
   test, so nothing thinner than a voxel slips between them); a voxel input
   marks every working voxel its solid voxels overlap.
2. The solid grows by the agent's radius plus half the crack tolerance
   (a box dilation, rounded up to whole voxels), so a crack narrower than
   the agent closes and every free voxel is at least the radius from the
   input's triangles.
3. Free voxels are grouped into 6-connected components. For a soup, a
   component that reaches the box's boundary is free. An enclosed one (the
   inside of a closed solid, a sealed room, a crate in it) is decided by
   ``cavities``:

   * ``"nested"`` (the default): the level's main space, its largest free
     component inside the level's extent (the box given, else the soup's
     own bounds without the padding), is air; crossing one closed shell
     from air leads into solid and from solid into air, crossing two
     changes nothing (:mod:`.nesting` counts the input triangles between
     neighbouring components, never reading the faces' direction). A rock
     in open space: the main space is outside it, the rock's inside solid,
     a hollow in it air. A sealed room: the main space is the room's
     inside, a crate's inside solid, a hollow in a crate air. Two solids
     that overlap nest like a hollow in one; the faces' direction between
     neighbours tells them apart (:mod:`.nesting`).
   * ``"solid"``: every enclosed component is solid.
   * ``"air"``: every enclosed component is free.
   * ``"winding"``: those where the soup's generalized winding number is
     below 1/2 in magnitude are free (air inside thick walls reads about 0,
     a closed solid's inside about 1; it reads the faces' direction, so a
     room whose faces point inward reads about -1 inside and is made solid:
     the stats' ``cavities_warning`` says so when the main space is).

   An open sheet encloses nothing, so it is a wall with free space on both
   sides. For a voxel input every free component is free: its occupancy is
   explicit.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..errors import BuildError

#: The most voxels a working grid may have (memory: ~6 bytes each at peak).
MAX_VOXELS = 2 ** 24
#: Winding sample points per enclosed component, and the most components
#: sampled (the rest, the smallest, count as solid).
WINDING_SAMPLES = 3
MAX_CAVITIES = 4096
#: Sample voxels per enclosed component for the nesting rule (a segment
#: along each axis both ways from each).
PARITY_SAMPLES = 3
#: What an enclosed free component is: by its nesting against the main space,
#: always solid, always air, or by the winding number (module docstring).
CAVITIES = ("nested", "solid", "air", "winding")
DEFAULT_CAVITIES = "nested"


class Grid(NamedTuple):
    """A working voxel grid: voxel ``(i, j, k)`` is the box ``lo + (i, j, k) * h``
    to ``lo + (i + 1, j + 1, k + 1) * h``."""
    lo: np.ndarray
    h: np.ndarray
    shape: tuple

    @property
    def hi(self):
        return self.lo + self.h * np.asarray(self.shape)


def working_grid(lo, hi, voxel_size=None, max_voxels=MAX_VOXELS):
    """The :class:`Grid` over the box ``lo..hi``: voxels of about ``voxel_size``
    (default: as fine as ``max_voxels`` allows), a whole number per axis,
    at least one; coarser when ``voxel_size`` would need more than
    ``max_voxels``."""
    lo = np.asarray(lo, np.float64)
    ext = np.asarray(hi, np.float64) - lo
    finest = (np.prod(ext) / max_voxels) ** (1 / 3)
    s = finest if voxel_size is None else max(float(voxel_size), finest)
    n = np.maximum(1, np.round(ext / s)).astype(np.int64)
    while np.prod(n) > max_voxels:
        n = np.maximum(1, np.floor(n * 0.98)).astype(np.int64)
    return Grid(lo, ext / n, tuple(int(x) for x in n))


def dilate(grid, k):
    """The box dilation of a uint8 grid by ``k`` (3,) voxels per axis."""
    from ._solid_kernels import dilate_last_axis
    out = grid
    for axis in range(3):
        if k[axis] <= 0:
            continue
        src = np.ascontiguousarray(np.moveaxis(out, axis, 2))
        dst = np.empty_like(src)
        dilate_last_axis(src, dst, int(k[axis]))
        out = np.moveaxis(dst, 2, axis)
    return np.ascontiguousarray(out)


def touched_by_soup(verts, tris, grid):
    """uint8 grid: 1 where a triangle of the soup meets the voxel (closed)."""
    from ._solid_kernels import mark_triangles
    g = np.zeros(grid.shape, np.uint8)
    mark_triangles(np.ascontiguousarray(verts, np.float64), np.ascontiguousarray(tris, np.int64),
                   grid.lo, grid.h, g, 1e-9 * grid.h)
    return g


def touched_by_voxels(vox, grid):
    """uint8 grid: 1 where a solid input voxel overlaps the working voxel's
    interior (a face in common is not an overlap)."""
    from ._solid_kernels import mark_boxes
    g = np.zeros(grid.shape, np.uint8)
    lo = vox.origin + vox.size * vox.ijk.astype(np.float64)
    mark_boxes(lo, lo + vox.size, grid.lo, grid.h, g, 1e-6 * grid.h)
    return g


def dilation_voxels(grid, agent_radius, crack, slack):
    """(3,) voxels per axis the solid grows by: ``agent_radius + crack / 2 +
    slack`` rounded up to whole voxels."""
    reach = float(agent_radius) + 0.5 * float(crack) + float(slack)
    return np.array([math.ceil(reach / h - 1e-9) if reach > 0 else 0 for h in grid.h], np.int64)


def _component_samples(labels, comps, per):
    """(len(comps), per, 3) voxel indices spread through each component of
    ``comps`` (its raster order: first, middle, last ...), read inside each
    one's bounding box (no sort of the whole grid)."""
    from scipy import ndimage
    boxes = ndimage.find_objects(labels)
    picks = np.empty((len(comps), per, 3), np.int64)
    for row, c in enumerate(comps):
        box = boxes[c - 1]
        at = np.flatnonzero(labels[box].ravel() == c)
        chosen = at[(np.arange(per) * (len(at) - 1)) // max(per - 1, 1)]
        ijk = np.stack(np.unravel_index(chosen, labels[box].shape), axis=1)
        picks[row] = ijk + [sl.start for sl in box]
    return picks


def component_sizes(labels, n, box=(slice(None),) * 3):
    """Voxels of each component (index 0: solid) in ``labels[box]``, a
    slab at a time (np.bincount of the whole grid would cast it to int64
    first: 8 bytes a voxel)."""
    part = labels[box]
    sizes = np.zeros(n + 1, np.int64)
    for i in range(part.shape[0]):
        sizes += np.bincount(part[i].ravel(), minlength=n + 1)
    return sizes


def _sizes_within(labels, n, grid, extent):
    """Voxels of each component (index 0: solid) whose centres lie in the
    box ``extent`` (``(lo, hi)``; None: the whole grid)."""
    if extent is not None:
        lo = np.ceil((np.asarray(extent[0], np.float64) - grid.lo) / grid.h - 0.5)
        hi = np.floor((np.asarray(extent[1], np.float64) - grid.lo) / grid.h - 0.5)
        i0 = np.clip(lo, 0, np.asarray(grid.shape)).astype(np.int64)
        i1 = np.clip(hi + 1, 0, np.asarray(grid.shape)).astype(np.int64)
        sizes = component_sizes(labels, n, tuple(slice(a, b) for a, b in zip(i0, i1)))
        if sizes[1:].any():
            return sizes
    return component_sizes(labels, n)


def _nested_air(labels, n, comps, main, edge, soup, grid, stats):
    """(len(comps),) bool: the walled-in components that are air by the
    nesting rule (:mod:`.nesting`)."""
    from .nesting import nested_air
    samples = _component_samples(labels, comps, PARITY_SAMPLES)
    return nested_air(labels, samples, comps, main, edge, soup, grid, stats)


def _winding_air(labels, n, comps, soup, grid, stats):
    """(len(comps),) bool: the components of winding number below 1/2 in
    magnitude (the mean over their sample points)."""
    from ._solid_kernels import winding_numbers
    ijk = _component_samples(labels, comps, WINDING_SAMPLES)
    pts = grid.lo + (ijk.reshape(-1, 3) + 0.5) * grid.h
    w = winding_numbers(np.ascontiguousarray(soup.verts, np.float64),
                        np.ascontiguousarray(soup.tris, np.int64), pts)
    w = w.reshape(-1, WINDING_SAMPLES).mean(axis=1)
    stats["_winding"] = dict(zip(comps.tolist(), w.tolist()))
    return np.abs(w) < 0.5


def free_components(free, soup, grid, cavities=DEFAULT_CAVITIES, extent=None):
    """``(free uint8 grid, stats)``: the free voxels kept by the rule in the
    module's docstring; ``extent``: the level's own box, where its main
    space is looked for (None: the grid's)."""
    from scipy import ndimage
    labels, n = ndimage.label(free)
    stats = {"free_components": int(n), "cavities": 0, "cavities_free": 0}
    if n == 0:
        return free, stats
    edge = np.zeros(n + 1, bool)
    for axis in range(3):
        for side in (0, -1):
            edge[np.unique(np.take(labels, side, axis=axis))] = True
    edge[0] = False
    keep = edge.copy()
    enclosed = np.flatnonzero(~edge[1:]) + 1
    stats["cavities"] = len(enclosed)
    if cavities == "air":
        stats["cavities_free"] = len(enclosed)
    if cavities == "air":
        stats["cavities_air_points"] = _air_points(labels, enclosed, grid)
    if not len(enclosed) or cavities == "air":
        return (free if cavities == "air" else keep[labels].astype(np.uint8)), stats
    within = _sizes_within(labels, n, grid, extent)
    main = int(np.argmax(within[1:])) + 1
    if cavities in ("nested", "winding"):
        sizes = component_sizes(labels, n)
        big = enclosed[np.argsort(-sizes[enclosed], kind="stable")][:MAX_CAVITIES]
        air = _nested_air(labels, n, big, main, edge, soup, grid, stats) \
            if cavities == "nested" \
            else _winding_air(labels, n, big, soup, grid, stats)
        keep[big[air]] = True
    stats["cavities_free"] = int(keep[enclosed].sum())
    stats["cavities_air_points"] = _air_points(labels, enclosed[keep[enclosed]], grid)
    if not keep[main]:
        _warn_main_space_solid(float(within[main] * np.prod(grid.h)), cavities,
                               stats.get("_winding", {}).get(main), stats)
    stats.pop("_winding", None)
    return keep[labels].astype(np.uint8), stats


def _air_points(labels, comps, grid, most=64):
    """[[x, y, z], ...]: a voxel centre in each of the first ``most``
    enclosed free regions ``comps`` kept as air (the report's "kept as air"
    made findable: ``regn locate`` it, or look there in a view)."""
    if not len(comps):
        return []
    ijk = _component_samples(labels, np.asarray(comps)[:most], 1)[:, 0]
    return (np.asarray(grid.lo) + (ijk + 0.5) * np.asarray(grid.h)).round(6).tolist()


def _warn_main_space_solid(volume, cavities, winding, stats):
    """``stats["cavities_warning"]``: the level's main space (its largest free
    component inside its extent, ``volume`` m^3) is walled in and was made
    solid: a sealed room read as a solid block."""
    why = ""
    if winding is not None:
        why = (f" (its winding number is {winding:+.2f}: "
               + ("the faces around it point inward, as a room's often do)" if winding < 0
                  else "it reads as the inside of a closed solid)"))
    stats["cavities_warning"] = (
        f"the level's largest free region ({volume:.4g} m^3) is walled in on every side and "
        f"was made solid by --cavities {cavities}{why}; --cavities nested reads a sealed "
        f"room's inside as air whichever way its faces point")


def mark_spheres(touched, spheres, grid):
    """Mark the voxels that balls (objects with ``centre`` and ``radius``) meet."""
    from ._solid_kernels import mark_spheres as kernel
    if spheres:
        c = np.array([s.centre for s in spheres], np.float64).reshape(-1, 3)
        r = np.array([s.radius for s in spheres], np.float64)
        kernel(c, r, grid.lo, grid.h, touched)


def free_grid(grid, *, soup=None, voxels=None, spheres=(), agent_radius=0.0, crack=0.0,
              slack=0.0, cavities=DEFAULT_CAVITIES, extent=None):
    """``(free uint8 grid, stats)`` of a soup or a voxel input (and balls)
    on ``grid``; ``extent``: the level's own box (``(lo, hi)``: the box
    given, else the soup's bounds), where the nesting rule looks for its
    main space."""
    if (soup is None) == (voxels is None):
        raise BuildError("give a triangle soup or voxels")
    if cavities not in CAVITIES:
        raise BuildError(f"cavities must be one of {', '.join(CAVITIES)}, got {cavities!r}")
    k = dilation_voxels(grid, agent_radius, crack, slack)
    # solid outside the box reaches in: mark and grow on the grid padded by
    # the growth, then keep the box's part
    padded = Grid(grid.lo - k * grid.h, grid.h, tuple(int(n) for n in np.asarray(grid.shape)
                                                      + 2 * k))
    touched = touched_by_soup(soup.verts, soup.tris, padded) if soup is not None else \
        touched_by_voxels(voxels, padded)
    mark_spheres(touched, list(spheres), padded)
    solid = np.ascontiguousarray(dilate(touched, k)[k[0]:k[0] + grid.shape[0],
                                                    k[1]:k[1] + grid.shape[1],
                                                    k[2]:k[2] + grid.shape[2]])
    del touched
    if soup is None:
        cavities = "air"
    free, stats = free_components(1 - solid, soup, grid, cavities, extent)
    stats["cavities_rule"] = cavities
    stats.update({"dilation_voxels": k.tolist(), "voxel_size": grid.h.tolist(),
                  "grid_shape": list(grid.shape), "solid_voxels": int(solid.sum())})
    return free, stats


__all__ = [
    "CAVITIES",
    "DEFAULT_CAVITIES",
    "MAX_VOXELS",
    "Grid",
    "dilate",
    "free_grid",
    "touched_by_soup",
    "touched_by_voxels",
    "working_grid",
]
