"""Worlds of tiles: build time, memory and speed-up, coverage, cross-world paths.

    python benchmarks/bench_world.py --asteroids 4000 --half-extent 250000 \\
        --tile-size 100000 --detail 8 --paths 1000 --out /tmp/bench-world

1. builds the field with ``regn build --asteroids N --half-extent H
   --tile-size S --detail D --workers W -o OUT/wW/world.json --json`` for
   each W of ``--workers`` (default 1 and 2): wall time, the tile phase's
   time, coverage, per-tile seconds and a worker's peak memory, and the
   speed-up of the last W over the first;
2. answers ``--paths`` random cross-world paths (start and goal uniform in
   the navigable volume) on ``regn.load(world, max_tiles=M)`` (``--max-tiles``,
   default 8): median and p99 milliseconds of wall time and of the
   process's own CPU time (the machine's other jobs do not count in it),
   tiles crossed and tiles read per path, the status counts; with
   ``--warm`` the same paths a second time (every tile already read once,
   and, when M is at least the tile count, still loaded);
3. the process's resident memory after the paths against the size of the M
   largest tile files.

Prints one JSON document (``--json-out`` also writes it).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np


def _rss(kind="VmRSS"):
    """Resident bytes of this process (``RssAnon``: its own memory;
    ``RssFile``: pages of mapped files, which the system may drop)."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(kind + ":"):
                return int(line.split()[1]) * 1024
    return 0


def build(args, workers):
    out = os.path.join(args.out, f"w{workers}", "world.json")
    cmd = [sys.executable, "-m", "regn", "build", "--asteroids", str(args.asteroids),
           "--half-extent", str(args.half_extent), "--seed", str(args.seed),
           "--tile-size", str(args.tile_size), "--workers", str(workers),
           "--coverage-samples", str(args.coverage_samples), "-o", out, "--force", "--json"]
    if args.detail:
        cmd[cmd.index("--seed"):cmd.index("--seed")] = ["--detail", str(args.detail)]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if done.returncode:
        raise SystemExit(f"build failed: {done.stderr.strip()}")
    rep = json.loads(done.stdout)
    tiles = rep["per_tile"]
    sec = np.array([t["seconds"] for t in tiles])
    return out, {
        "command": " ".join(cmd[1:]).replace(sys.executable, "python"),
        "workers": workers, "wall_seconds": wall, "seconds": rep["seconds"],
        "tiles": rep["tiles"], "grid": rep["grid"], "coverage": rep["coverage"],
        "linked_wall_fraction": rep["linked_wall_fraction"],
        "tets": rep["tets"], "faces": rep["faces"],
        "tile_seconds": {"median": float(np.median(sec)), "max": float(sec.max()),
                         "sum": float(sec.sum())},
        "tile_detail": {"min": min(t["detail"] for t in tiles),
                        "max": max(t["detail"] for t in tiles)},
        "tile_coverage_min": min(t["coverage"] or 1.0 for t in tiles),
        "worker_peak_rss_mib": max(t["peak_rss"] for t in tiles) / 2 ** 20,
    }


def _pass(world, ends, n, budget, keep=None):
    """One pass of find_path over the pairs: wall and CPU milliseconds (the
    CPU time is the process's own: the machine's other jobs do not count),
    tiles crossed and read, statuses."""
    ms, cpu, crossed, read, status = [], [], [], [], {}
    t_start = time.perf_counter()
    for a, b in zip(ends[:n], ends[n:]):
        if budget and time.perf_counter() - t_start > budget:
            break                         # out of time: the paths done so far
        before = world.tiles_read
        t0, c0 = time.perf_counter(), time.process_time()
        p = world.find_path(a, b)
        ms.append(1000 * (time.perf_counter() - t0))
        cpu.append(1000 * (time.process_time() - c0))
        read.append(world.tiles_read - before)
        crossed.append(len(getattr(p, "tiles", []) or []))
        status[p.status] = status.get(p.status, 0) + 1
        if keep is not None:
            keep.append(p)
    ms, cpu, crossed, read = map(np.array, (ms, cpu, crossed, read))
    return {
        "paths": len(ms), "status": status,
        "ms": {"median": float(np.median(ms)), "p99": float(np.quantile(ms, 0.99)),
               "mean": float(ms.mean())},
        "cpu_ms": {"median": float(np.median(cpu)), "p99": float(np.quantile(cpu, 0.99)),
                   "mean": float(cpu.mean())},
        "tiles_crossed": {"median": float(np.median(crossed)), "max": int(crossed.max())},
        "tiles_read": {"mean": float(read.mean()), "median": float(np.median(read)),
                       "max": int(read.max())},
    }


def _agreement(new, old):
    """Reachability and length ratio of two passes' paths (new / old)."""
    both = [(p.length, q.length) for p, q in zip(new, old) if p.found and q.found]
    r = np.array([a / b for a, b in both]) if both else np.ones(1)
    return {"pairs": len(new), "same_reachability": int(sum(p.found == q.found
                                                            for p, q in zip(new, old))),
            "found_new": int(sum(p.found for p in new)),
            "found_old": int(sum(q.found for q in old)),
            "length_ratio": {"median": float(np.median(r)), "p10": float(np.quantile(r, 0.1)),
                             "p90": float(np.quantile(r, 0.9)), "min": float(r.min()),
                             "max": float(r.max()),
                             "within_1pct": float(np.mean(np.abs(r - 1) <= 0.01))}}


def paths(world_path, n, seed, budget=None, max_tiles=8, warm=False, compare_old=False):
    """``n`` random paths on ``regn.load(world, max_tiles=...)``; with
    ``warm`` the same pairs again (every tile read and prepared once); with
    ``compare_old`` the same pairs by the search per tile
    (``World.compiled_walk = False``, :mod:`regn.world.route`): its times
    and the agreement (reachability, length ratio new / old)."""
    import regn
    from regn.world.world import World
    import gc
    ends = World.open(world_path, max_tiles=8).random_points(2 * n, seed=seed)
    world = regn.load(world_path, max_tiles=max_tiles)
    world.find_path(ends[0], ends[n])     # the kernels loaded (compiled) before timing
    world.clear()                         # ... and no tile loaded when memory is measured
    gc.collect()
    base, base_anon, base_file = _rss(), _rss("RssAnon"), _rss("RssFile")
    out = {"asked": n, "max_tiles": world.max_tiles,
           "distance_km": {"median": float(np.median(np.linalg.norm(ends[:n] - ends[n:],
                                                                    axis=1)) / 1e3)}}
    done = []
    slots = getattr(world, "_tile_slots", None)
    before = int(slots.counts[1]) if slots is not None else 0
    out.update(_pass(world, ends, n, budget, done))
    slots = getattr(world, "_tile_slots", None)
    if slots is not None:                 # (both searches of the walk, first pass)
        out["faces_expanded_per_path"] = (float(slots.counts[1]) - before) / max(len(done), 1)
    if warm:
        out["warm"] = _pass(world, ends, n, budget)
    m = world.manifest
    sizes = sorted((t.bytes for t in m.tiles), reverse=True)
    gc.collect()
    out.update({"loaded_at_end": len(world.loaded), "rss_growth_mib": (_rss() - base) / 2 ** 20,
                "rss_anon_growth_mib": (_rss("RssAnon") - base_anon) / 2 ** 20,
                "rss_file_growth_mib": (_rss("RssFile") - base_file) / 2 ** 20,
                "largest_tiles_mib": sum(sizes[:world.max_tiles]) / 2 ** 20,
                "loaded_tiles_mib": sum(m.tiles[i].bytes for i in world.loaded) / 2 ** 20})
    if compare_old:
        world.clear()
        old = regn.load(world_path, max_tiles=max_tiles)
        old.compiled_walk = False
        before = []
        out["old"] = _pass(old, ends, len(done), budget, before)
        out["agreement"] = _agreement(done, before)
    import resource
    out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--asteroids", type=int, default=4000)
    ap.add_argument("--half-extent", type=float, default=250_000.0)
    ap.add_argument("--tile-size", type=float, default=100_000.0)
    ap.add_argument("--detail", type=float, default=8.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--coverage-samples", type=int, default=50_000)
    ap.add_argument("--paths", type=int, default=1000)
    ap.add_argument("--out", default="/tmp/bench-world")
    ap.add_argument("--json-out")
    ap.add_argument("--world", help="query this built world instead of building")
    ap.add_argument("--budget", type=float, help="stop the paths after this many seconds")
    ap.add_argument("--max-tiles", type=int, default=8, help="tiles kept loaded (default 8)")
    ap.add_argument("--compare-old", action="store_true",
                    help="answer the same paths by the search per tile too (regn.world.route)")
    ap.add_argument("--warm", action="store_true",
                    help="answer the same paths a second time (tiles already read)")
    args = ap.parse_args(argv)
    result = {"builds": []}
    world = None
    for w in ([] if args.world else [int(v) for v in args.workers.split(",")]):
        world, rep = build(args, w)
        result["builds"].append(rep)
        print(json.dumps(rep), file=sys.stderr, flush=True)
    b = result["builds"]
    if len(b) > 1:
        few, many = min(b, key=lambda r: r["workers"]), max(b, key=lambda r: r["workers"])
        result["speedup"] = {"total": few["seconds"]["total"] / many["seconds"]["total"],
                             "tiles": few["seconds"]["tiles"] / many["seconds"]["tiles"],
                             "workers": [few["workers"], many["workers"]]}
    if args.paths:
        result["queries"] = paths(args.world or world, args.paths, args.seed, args.budget,
                                  args.max_tiles, args.warm, args.compare_old)
    text = json.dumps(result, indent=1)
    print(text)
    if args.json_out:
        with open(args.json_out, "w") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    main()
