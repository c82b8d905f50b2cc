"""How a level's world would be cut, without building it: tiles and points a tile.

    python benchmarks/make_levels.py /tmp/levels --seed 1
    python benchmarks/level_plan_bench.py /tmp/levels rooms.obj caves.npy

For each level (as level_world_bench.py reads it: its box and agent radius
from ``levels.json``), the automatic plan of ``regn.world.build(level=...)``
(the solid, the cut, the wall points; no tile is built): the grid, the
tile count and each tile's points (octree corners and wall points: what
the cut keeps under ``level_plan.TILE_BUDGET``), and the seconds. Prints
one JSON line a level.
"""

from __future__ import annotations

import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def plan(directory, name):
    import regn.world.level_plan as LP
    from level_world_bench import _read
    seen = {}
    inner, sampler = LP._inner, LP.wall_sampler

    def counting_inner(S, cuts):
        seen["inner"] = inner(S, cuts)
        return seen["inner"]

    def keeping_sampler(grid, cuts, free, jitter, seed):
        seen["sampler"], worst = sampler(grid, cuts, free, jitter, seed)
        seen["grid"] = grid
        return seen["sampler"], worst

    LP._inner, LP.wall_sampler = counting_inner, keeping_sampler
    try:
        level, box, r = _read(directory, name)
        t0 = time.perf_counter()
        _, _, grid, _, _ = LP.level_plan(box, [], level, "auto", r, {"seed": 0}, {}, None)
        seconds = time.perf_counter() - t0
    finally:
        LP._inner, LP.wall_sampler = inner, sampler
    pts = np.array([int(seen["inner"][i]) + len(seen["sampler"].tile(i))
                    for i in seen["grid"].indices()])
    return {"level": name, "grid": list(grid.n), "tiles": int(np.prod(grid.n)),
            "points": {"median": float(np.median(pts)), "max": int(pts.max()),
                       "budget": LP.TILE_BUDGET}, "seconds": seconds}


if __name__ == "__main__":
    for name in sys.argv[2:]:
        print(json.dumps(plan(sys.argv[1], name)), flush=True)
