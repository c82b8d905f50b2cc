"""What a byte budget costs a world's queries: the mean time of the same
paths on a world opened with and without ``max_bytes``, and of the budget
check made between queries (``World._settle``, which measures what the
world holds for each tile).

    python benchmarks/bench_world_budget.py [--world W/world.json] [--paths 200]

Without ``--world`` it builds the 2x2x2 field of the tests (12 asteroids in
a 40 km box) under ``--out``.
"""

import argparse
import json
import os
import time

import numpy as np


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--world")
    ap.add_argument("--paths", type=int, default=200)
    ap.add_argument("--max-tiles", type=int, default=8)
    ap.add_argument("--out", default="/tmp/bench-world-budget")
    args = ap.parse_args(argv)
    import regn
    from regn.builder.obstacles import random_asteroid_field
    from regn.world import build
    path = args.world or os.path.join(args.out, "world.json")
    if not os.path.exists(path):
        h = 20_000.0
        build(((-h,) * 3, (h,) * 3), random_asteroid_field(12, seed=3, half_extent=h),
              out=path, tile_size=h, workers=1, coverage_samples=0)
    world = regn.load(path)
    pts = world.random_points(2 * args.paths, seed=1).reshape(args.paths, 2, 3)
    out = {"world": path, "paths": args.paths, "max_tiles": args.max_tiles}
    for label, budget in (("no max_bytes", None), ("max_bytes 1 TiB", 1 << 40)):
        w = regn.load(path, max_tiles=args.max_tiles, max_bytes=budget)
        for a, b in pts[:20]:
            w.find_path(a, b)                       # warm: tiles read, kernels loaded
        t = time.perf_counter()
        for a, b in pts:
            w.find_path(a, b)
        out[label] = {"path_ms_mean": 1e3 * (time.perf_counter() - t) / args.paths}
        if budget is not None:
            t = time.perf_counter()
            for _ in range(50):
                w._settle()
            out[label]["settle_ms"] = 1e3 * (time.perf_counter() - t) / 50
            out[label]["tiles_held"] = len(w._held())
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
