"""A level as one REGN against the same level as a world of tiles.

    python benchmarks/make_levels.py /tmp/levels --seed 1
    python benchmarks/level_world_bench.py /tmp/levels [rooms.obj caves.npy ...] [--workers 2]
                                           [--world-only]

Per level, each in a fresh process (peak memory is the child's max RSS; a
world's tile workers report their own): the single REGN at the defaults
(regn.levels.generate_level) and the world at the defaults
(regn.world.build(level=...), automatic tiles, every core): seconds, peak
memory, tetrahedra, coverage of the free voxels (Monte Carlo, the world's
weighted by each tile's free volume), links and linked faces, and
BREACHES against the INPUT (levels_bench.py's test: 16 random points, the
centroid and corners of every stored tetrahedron (4 random points for a
world's tiles), nearer a
triangle than the agent radius minus 1 cm by libigl's exact distance, or
within it of a solid voxel). Then 200 random paths between free points
of the world (20, or as many as 180 s allow): found, crossing tiles, median time.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from levels_bench import CLOSED, _samples, _soup_breaches, _voxel_breaches


def _read(directory, name):
    from regn.levels import read_soup, read_voxels
    with open(os.path.join(directory, "levels.json")) as fh:
        meta = json.load(fh)[name]
    path = os.path.join(directory, name)
    level = read_voxels(path, meta["voxel_size"]) if name.endswith(".npy") else read_soup(path)
    return level, meta.get("box"), meta["agent_radius"]


def _breaches(meshes, level, r, name, per=16):
    n = bad = 0
    for mesh in meshes:
        if mesh.n_tets == 0:
            continue
        p = _samples(mesh, per)
        n += len(p)
        bad += _voxel_breaches(p, level, r) if name.endswith(".npy") else \
            _soup_breaches(p, level, r, name in CLOSED)
    return n, bad


def single(directory, name):
    from regn.levels import generate_level
    level, box, r = _read(directory, name)
    t0 = time.perf_counter()
    mesh = generate_level(box, level, agent_radius=r)
    t = time.perf_counter() - t0
    rep = mesh.build_report
    n, bad = _breaches([mesh], level, r, name)
    return {"mode": "one REGN", "seconds": t, "tets": rep["tets"], "faces": rep["faces"],
            "coverage": rep["coverage"], "min_block": rep["min_block"],
            "pieces": rep["mesh_components"], "samples": n, "breaches": bad,
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def _paths(world, n=20, seed=3, budget=180.0):
    rng = np.random.default_rng(seed)
    lo, hi = world.manifest.lo, world.manifest.hi
    pts = rng.uniform(lo, hi, (20 * n, 3))
    pts = pts[world.locate(pts) >= 0][:2 * n].reshape(-1, 2, 3)
    found = crossing = 0
    times = []
    t_start = time.perf_counter()
    for a, b in pts:
        if time.perf_counter() - t_start > budget:
            break
        t = time.perf_counter()
        p = world.find_path(a, b)
        times.append(time.perf_counter() - t)
        found += p.found
        crossing += p.found and len(p.tiles) > 1
    return {"paths": len(times), "found": found, "crossing_tiles": crossing,
            "median_ms": 1e3 * float(np.median(times)) if times else None}


def world(directory, name, workers):
    import regn
    from regn.world import build
    level, box, r = _read(directory, name)
    out = os.path.join(tempfile.mkdtemp(prefix="lworld_"), "world.json")
    t0 = time.perf_counter()
    m = build(box, level=level, out=out, agent_radius=r, workers=workers,
              coverage_samples=20_000)
    t = time.perf_counter() - t0
    b = m.build
    w = regn.load(out)
    t1 = time.perf_counter()
    n, bad = _breaches((w.tile(i) for i in range(len(m.tiles))), level, r, name, per=4)
    t_check = time.perf_counter() - t1
    row = {"mode": "world", "seconds": t, "tiles": b["tiles"], "grid": b["grid"],
           "tets": b["tets"], "faces": b["faces"], "coverage": b["coverage"],
           "links": len(m.links), "linked_faces": int(sum(len(lk.faces) for lk in m.links)),
           "linked_wall_fraction": b["linked_wall_fraction"],
           "samples": n, "breaches": bad, "check_s": t_check,
           "wall_level": b["level"]["wall_level"],
           "planned_block": b["level"]["planned_block"],
           "planned_block_share": b["level"]["planned_block_share"],
           "tile_voxels": b["level"]["tile_voxels"], "phase_seconds": b["seconds"],
           "worker_peak_mb": max(x["peak_rss"] for x in b["per_tile"]) / 2 ** 20,
           "slowest_tile_s": max(x["seconds"] for x in b["per_tile"]),
           "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
           "manifest": out}
    row.update(_paths(w))
    return row


def main(argv=None):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("directory", help="the folder make_levels.py wrote (levels.json)")
    ap.add_argument("names", nargs="*", default=["rooms.obj", "caves.npy"],
                    help="levels of that folder (default: rooms.obj caves.npy)")
    ap.add_argument("--workers", type=int, default=0, help="tile build processes")
    ap.add_argument("--world-only", action="store_true", help="no single-REGN run")
    args = ap.parse_args(argv)
    if not os.path.isfile(os.path.join(args.directory, "levels.json")):
        ap.error(f"{args.directory}: no levels.json (run benchmarks/make_levels.py first)")
    modes = ("world",) if args.world_only else ("single", "world")
    for name in args.names:
        for mode in modes:
            cmd = [sys.executable, __file__, "--one", args.directory, name, mode,
                   str(args.workers)]
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if proc.returncode:
                print(name, mode, "FAILED", proc.stderr.strip().splitlines()[-3:])
                continue
            row = json.loads(proc.stdout.strip().splitlines()[-1])
            row["input"] = name
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one"]:
        d, name, mode, workers = sys.argv[2:6]
        fn = single if mode == "single" else (lambda d, n: world(d, n, int(workers) or None))
        print(json.dumps(fn(d, name)))
    else:
        main()
