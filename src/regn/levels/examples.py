"""Two small example levels, made as users' files are made, for the demo and
the README: a hangar written the way an editor exports it, and a voxel cave.

* :func:`hangar_obj` — the text of an ``.obj``: a 100 x 60 x 20 m hangar bay,
  open at both ends, of several objects; one-sided wall and roof sheets (open
  shells), an n-gon deck, crates as quad boxes, one crate sunk into a pillar
  (interpenetrating) and the roof's seam left with a 2 cm crack.
* :func:`cave_voxels` — a bool occupancy array of a cave system: rock with
  tunnels carved from a central hall along random walks, from a seed.
"""

from __future__ import annotations

import numpy as np

_BOX_QUADS = ((0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3))


class _Obj:
    """An .obj text being written: objects of polygons (1-based indices)."""

    def __init__(self):
        self.lines = ["# regn example level: a hangar bay (metres)"]
        self.n = 0

    def add(self, name, verts, polys):
        self.lines.append(f"o {name}")
        self.lines += [f"v {x:g} {y:g} {z:g}" for x, y, z in verts]
        self.lines += ["f " + " ".join(str(self.n + 1 + i) for i in p) for p in polys]
        self.n += len(verts)

    def box(self, name, lo, hi):
        corners = [(x, y, z) for x in (lo[0], hi[0]) for y in (lo[1], hi[1])
                   for z in (lo[2], hi[2])]
        self.add(name, corners, _BOX_QUADS)


def hangar_obj() -> str:
    """The hangar level's ``.obj`` text (see the module's docstring)."""
    obj = _Obj()
    # The deck: one octagon-ish n-gon, a one-sided sheet.
    deck = [(0, 5, 0), (5, 0, 0), (95, 0, 0), (100, 5, 0), (100, 55, 0), (95, 60, 0),
            (5, 60, 0), (0, 55, 0)]
    obj.add("deck", deck, [tuple(range(8))])
    obj.add("wall_south", [(0, 0, 0), (100, 0, 0), (100, 0, 20), (0, 0, 20)], [(0, 1, 2, 3)])
    obj.add("wall_north", [(0, 60, 0), (0, 60, 20), (100, 60, 20), (100, 60, 0)],
            [(0, 1, 2, 3)])
    # The roof in two panels with a 2 cm seam between them.
    obj.add("roof_west", [(0, 0, 20), (0, 60, 20), (49.99, 60, 20), (49.99, 0, 20)],
            [(0, 1, 2, 3)])
    obj.add("roof_east", [(50.01, 0, 20), (50.01, 60, 20), (100, 60, 20), (100, 0, 20)],
            [(0, 1, 2, 3)])
    for i, x in enumerate((20, 40, 60, 80)):
        obj.box(f"pillar_{i}", (x - 1.5, 28.5, 0), (x + 1.5, 31.5, 20))
    obj.box("crate_sunk", (38, 27, 0), (42.5, 30, 3))        # into pillar_1
    for i, (x, y) in enumerate(((10, 10), (12, 14), (70, 45), (85, 12))):
        obj.box(f"crate_{i}", (x, y, 0), (x + 3, y + 3, 3))
    return "\n".join(obj.lines) + "\n"


def cave_voxels(shape=(60, 60, 30), *, seed=0, tunnels=6, steps=90) -> np.ndarray:
    """A bool ``shape`` occupancy grid (True: rock) with ``tunnels`` tunnels
    carved from a central hall along random walks of ``steps`` steps, of
    radius 3 voxels, so that every tunnel reaches every other."""
    rng = np.random.default_rng(seed)
    shape = tuple(int(s) for s in shape)
    occ = np.ones(shape, bool)
    ii, jj, kk = np.indices(shape, sparse=True)
    hi = np.asarray(shape) - 3
    for _ in range(tunnels):
        p = (np.asarray(shape) - 1) / 2.0
        heading = rng.normal(size=3)
        for _ in range(steps):
            heading = heading + 0.6 * rng.normal(size=3)
            heading[2] *= 0.5                        # caves run flatter than they climb
            p = np.clip(p + heading / np.linalg.norm(heading), 3, hi)
            occ &= (ii - p[0]) ** 2 + (jj - p[1]) ** 2 + (kk - p[2]) ** 2 > 9.0
    return occ


__all__ = ["cave_voxels", "hangar_obj"]
