"""A sphere's paths across a world's tiles against one REGN of the same field.

    python benchmarks/bench_world_radius.py --asteroids 12 --half-extent 20000 \\
        --tile-size 20000 --detail 4 --pairs 200 --radii 200,1000 --out /tmp/bench-wr

Builds the asteroid field (``random_asteroid_field(N, seed, H)``) as a world
of tiles (``regn.world.build``, ``--tile-size``; kept in ``--out``) and as
one REGN at ``--detail`` (when the field fits one), then for ``--pairs``
random pairs of ends (uniform in the box, in both meshes' volume) and each
radius of ``--radii``: the world's ``find_path(a, b, radius=r)`` and the
REGN's, the REGN's made taut the way the world's is
(:func:`regn.world.route.straighten` with the radius). Reported per radius:
the statuses of both (same / different, with counts), the ratio of the
world's length to the REGN's where both found one (median, 10th and 90th
percentile, extremes, share within 1 % and 2 %), and the world's time per
path, wall and the process's own CPU (the first pass, which makes each
tile's wall set and witnesses, and a second pass over the same pairs),
median and p90, with the tiles crossed. The REGN's radius path time is
given alongside (its own first pass builds its clearances the same way).
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np


def _args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--asteroids", type=int, default=12)
    p.add_argument("--half-extent", type=float, default=20_000.0)
    p.add_argument("--tile-size", type=float, default=20_000.0)
    p.add_argument("--detail", type=float, default=4.0)
    p.add_argument("--seed", type=int, default=3)
    p.add_argument("--pairs", type=int, default=200)
    p.add_argument("--radii", default="200,1000")
    p.add_argument("--max-tiles", type=int, default=8)
    p.add_argument("--out", default="/tmp/bench-world-radius")
    p.add_argument("--no-single", action="store_true", help="world times only")
    return p.parse_args(argv)


def _stats(x):
    x = np.asarray(x, float)
    if not len(x):
        return {}
    return {"median": float(np.median(x)), "p10": float(np.quantile(x, 0.1)),
            "p90": float(np.quantile(x, 0.9)), "min": float(x.min()), "max": float(x.max())}


def main(argv=None):
    import regn
    from regn.builder.obstacles import random_asteroid_field
    from regn.query.paths.path import Path
    from regn.world import build as build_world
    from regn.world.route import straighten
    a = _args(argv)
    h = a.half_extent
    box = ((-h,) * 3, (h,) * 3)
    field = random_asteroid_field(a.asteroids, seed=a.seed, half_extent=h)
    manifest = os.path.join(a.out, "world.json")
    if not os.path.exists(manifest):
        t = time.perf_counter()
        build_world(box, field, out=manifest, tile_size=a.tile_size, detail=a.detail,
                    coverage_samples=0)
        print(f"world built in {time.perf_counter() - t:.1f} s")
    world = regn.load(manifest, max_tiles=a.max_tiles)
    single = None
    if not a.no_single:
        t = time.perf_counter()
        single = regn.generate(box, field, detail=a.detail, coverage_samples=0)
        print(f"one REGN built in {time.perf_counter() - t:.1f} s ({single.n_tets} tetrahedra)")
    rng = np.random.default_rng(1)
    ends = []
    while len(ends) < a.pairs:
        s, g = rng.uniform(-0.95 * h, 0.95 * h, (2, 3))
        if world.locate([s])[0] < 0 or world.locate([g])[0] < 0:
            continue
        if single is not None and (single.locate([s])[0] < 0 or single.locate([g])[0] < 0):
            continue
        ends.append((s, g))
    report = {"world": repr(world), "pairs": len(ends)}
    for r in (float(x) for x in a.radii.split(",")):
        rows = []
        for rep in range(2):
            for i, (s, g) in enumerate(ends):
                w0, c0 = time.perf_counter(), time.process_time()
                try:
                    p = world.find_path(s, g, radius=r)
                except regn.QueryError:           # (a route through more tiles than slots)
                    p = Path(False, "refused: max_tiles")
                wall, cpu = time.perf_counter() - w0, time.process_time() - c0
                if rep == 0:
                    rows.append({"world": p.status, "length": p.length if p.found else None,
                                 "tiles": len(getattr(p, "tiles", None) or []),
                                 "first_ms": 1e3 * wall, "first_cpu_ms": 1e3 * cpu})
                else:
                    rows[i].update(ms=1e3 * wall, cpu_ms=1e3 * cpu)
        if single is not None:
            for row, (s, g) in zip(rows, ends):
                c0 = time.process_time()
                q = single.find_path(s, g, radius=r)
                row["single_cpu_ms"] = 1e3 * (time.process_time() - c0)
                row["single"] = q.status
                if q.found:
                    pts = straighten(single, q.points, r)
                    row["single_length"] = float(np.linalg.norm(np.diff(pts, axis=0),
                                                                axis=1).sum())
        out = {"world_status": _count(x["world"] for x in rows),
               "world_cpu_ms": _stats([x["cpu_ms"] for x in rows]),
               "world_wall_ms": _stats([x["ms"] for x in rows]),
               "world_first_cpu_ms": _stats([x["first_cpu_ms"] for x in rows]),
               "tiles_crossed": _stats([x["tiles"] for x in rows if x["world"] == "ok"]),
               "tiles_read": world.tiles_read}
        if single is not None:
            both = [x for x in rows if x["world"] == "ok" and x["single"] == "ok"]
            ratio = np.array([x["length"] / x["single_length"] for x in both])
            out.update(same_status=sum(x["world"] == x["single"] for x in rows),
                       differ=_count(f"{x['world']} / {x['single']}" for x in rows
                                     if x["world"] != x["single"]),
                       ratio=_stats(ratio),
                       within_1pc=float(np.mean(np.abs(ratio - 1) <= 0.01)) if len(ratio) else None,
                       within_2pc=float(np.mean(np.abs(ratio - 1) <= 0.02)) if len(ratio) else None,
                       single_cpu_ms=_stats([x["single_cpu_ms"] for x in rows]))
        report[f"radius {r:g}"] = out
        print(json.dumps({f"radius {r:g}": out}, indent=1))
    return report


def _count(items):
    out = {}
    for x in items:
        out[x] = out.get(x, 0) + 1
    return out


if __name__ == "__main__":
    main()
