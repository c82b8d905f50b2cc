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
3. memory (``--memory``): the process's resident memory before and after
   the paths, its own part (``RssAnon``) and mapped file pages (``RssFile``)
   apart, the most it grew at any sample (every 20 paths), and after
   ``malloc_trim`` (:func:`regn.world.memory.trim`); against the budget: the
   M largest footprints of tiles in use (:meth:`regn.World.footprint`: the
   tile's file, its ``.query`` file and the search state built on it, the
   most each was seen holding) + 20 %, and the M largest tile files alone.
   With ``--trim`` the World gives freed memory back each time it drops
   tiles (``World(trim=True)``); ``--max-bytes`` sets its byte budget, MiB;
   also the milliseconds to read a tile and answer a first path in it.
   ``memory_goal``: the growth (at the end, and the most at any sample)
   against M tiles' files (.rgn + .query: the M largest, and M times the
   median) + 20 %; ``memory_split``: the baseline apart (resident memory
   at start, after importing regn, after the warm-up path and
   ``World.clear()``: numba's kernels and runtime, not the World's), the
   growth by kind of mapping (the heap, anonymous maps, the tiles'
   ``.query`` and ``.rgn`` maps, code; own memory and file pages apart,
   from ``/proc/self/smaps``) and what ``world.memory()`` says the World
   holds (loaded tiles, walk slots, clearance structures, the index).

   python benchmarks/bench_world.py --world W/world.json --paths 1000 \\
       --max-tiles 8 --memory [--trim]

``--speedup`` measures the tile builds' speed-up with workers instead
(nothing else), fairly: the same world built by ``regn.world.build`` in a
fresh process for each setting of ``--settings`` (default
``1,1x1,2x1,2x2``: W workers of T threads each; ``1`` alone is the
in-process build on every core's threads, what ``--workers 1`` does),
the settings run back to back and the whole round repeated ``--rounds``
times (the machine may be shared: compare within a round). Reported per
setting: the tile phase's and the whole build's wall seconds (median and
best over the rounds), the CPU seconds of the build's processes, the
build's phases (``sample_walls``: the plan; ``tiles``: up to the last
tile; ``links``: the node tables left after it), the peak resident memory
of the calling process and of the largest worker, the 1-minute load
average before and after each build, and the speed-up of each over
``1x1`` (one worker of one thread; the whole build's: the median of the
rounds' ratios)::

    python benchmarks/bench_world.py --speedup --asteroids 500 \
        --half-extent 100000 --tile-size 66667 --detail 16 --rounds 3

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


#: /proc/self/smaps mappings by what they hold (the first that matches)
_KINDS = (("query", lambda n: n.endswith(".query")), ("rgn", lambda n: n.endswith(".rgn")),
          ("heap", lambda n: n == "[heap]"), ("anonymous_maps", lambda n: n == ""),
          ("code", lambda n: ".so" in n or n.endswith((".nbc", ".nbi", ".zip")) or "python" in n),
          ("other", lambda n: True))


def _smaps():
    """MiB resident per kind of mapping (:data:`_KINDS`), each ``{"anon",
    "file"}``: ``heap`` is the allocator's (Python objects, small arrays,
    numba's NRT, memory freed but kept by glibc), ``anonymous_maps`` large
    arrays and the JIT's code (numba/LLVM), ``query``/``rgn`` the pages of
    the tiles' file maps, ``code`` shared libraries and numba's cache."""
    out = {k: {"anon": 0.0, "file": 0.0} for k, _ in _KINDS}
    kind = "other"
    rss = anon = 0
    try:
        fh = open("/proc/self/smaps")
    except OSError:
        return {}
    with fh:
        for line in fh:
            head = line.split(None, 5)
            if "-" in head[0] and not head[0].endswith(":"):
                if kind is not None:
                    out[kind]["anon"] += anon / 1024
                    out[kind]["file"] += (rss - anon) / 1024
                name = head[5].strip() if len(head) > 5 else ""
                kind = next(k for k, test in _KINDS if test(name))
                rss = anon = 0
            elif head[0] == "Rss:":
                rss = int(head[1])
            elif head[0] in ("Anonymous:",):
                anon = int(head[1])
    out[kind]["anon"] += anon / 1024
    out[kind]["file"] += (rss - anon) / 1024
    return out


def _status():
    """MiB: the process's resident memory, its own part (``anon``) and
    mapped file pages (``file``; shared memory, ``RssShmem``, apart)."""
    mib = 2 ** 20
    return {"rss": _rss() / mib, "anon": _rss("RssAnon") / mib, "file": _rss("RssFile") / mib,
            "shmem": _rss("RssShmem") / mib}


def _minus(a, b):
    """``a - b`` of two nested dicts of numbers."""
    if isinstance(a, dict):
        return {k: _minus(a[k], b.get(k, 0) if isinstance(b, dict) else 0) for k in a}
    return a - b


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


_ONE_BUILD = """
import json, sys, time, resource
import regn.world
from regn.builder.obstacles import random_asteroid_field
a = json.loads(sys.argv[1])
h = a["half_extent"]
t0 = time.perf_counter()
m = regn.world.build(((-h,) * 3, (h,) * 3), random_asteroid_field(a["asteroids"], seed=a["seed"],
                     half_extent=h), out=a["out"], tile_size=a["tile_size"], detail=a["detail"],
                     workers=a["workers"], threads=a["threads"], force=True,
                     coverage_samples=a["coverage_samples"])
wall = time.perf_counter() - t0
cpu = sum(getattr(resource.getrusage(w), k) for w in (resource.RUSAGE_SELF,
          resource.RUSAGE_CHILDREN) for k in ("ru_utime", "ru_stime"))
print(json.dumps({"wall": wall, "cpu": cpu, "seconds": m.build["seconds"],
                  "tiles": m.build["tiles"], "coverage": m.build["coverage"],
                  "peak_rss_mib": {"main": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                                   / 1024,
                                   "worker": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
                                   / 1024},
                  "sha": [t.sha256 for t in m.tiles]}))
"""


def speedup(args):
    """The same world built with each of ``args.settings`` (``W`` or
    ``WxT``), round after round."""
    settings = [s.strip() for s in args.settings.split(",")]
    runs = {s: [] for s in settings}
    for rnd in range(args.rounds):
        for s in settings:
            w, _, t = s.partition("x")
            a = {"half_extent": args.half_extent, "asteroids": args.asteroids,
                 "seed": args.seed, "tile_size": args.tile_size, "detail": args.detail,
                 "workers": int(w), "threads": int(t) if t else None,
                 "coverage_samples": args.coverage_samples,
                 "out": os.path.join(args.out, f"speedup-{s}", "world.json")}
            load = os.getloadavg()[0]
            done = subprocess.run([sys.executable, "-c", _ONE_BUILD, json.dumps(a)],
                                  capture_output=True, text=True)
            if done.returncode:
                raise SystemExit(f"build {s} failed: {done.stderr.strip()[-2000:]}")
            r = json.loads(done.stdout.strip().splitlines()[-1])
            r["load"] = [load, os.getloadavg()[0]]
            runs[s].append(r)
            print(json.dumps({"round": rnd, "setting": s, "wall": r["wall"], "cpu": r["cpu"],
                              "phases": r["seconds"], "load_1min": r["load"]}),
                  file=sys.stderr, flush=True)
    shas = {tuple(r["sha"]) for rs in runs.values() for r in rs}
    out = {"command": "python benchmarks/bench_world.py --speedup " + " ".join(
               f"--{k.replace('_', '-')} {getattr(args, k)}" for k in
               ("asteroids", "half_extent", "tile_size", "detail", "rounds", "settings")),
           "tiles": runs[settings[0]][0]["tiles"], "same_tiles": len(shas) == 1,
           "cores": os.cpu_count(), "settings": {}}
    base = "1x1" if "1x1" in runs else settings[0]
    for s, rs in runs.items():
        tiles = np.array([r["seconds"]["tiles"] for r in rs])
        total = np.array([r["wall"] for r in rs])
        ratio = np.array([b["seconds"]["tiles"] / r["seconds"]["tiles"]
                          for b, r in zip(runs[base], rs)])
        out["settings"][s] = {
            "tiles_wall": {"median": float(np.median(tiles)), "best": float(tiles.min())},
            "build_wall": {"median": float(np.median(total)), "best": float(total.min())},
            "cpu": {"median": float(np.median([r["cpu"] for r in rs]))},
            # the build's phases (regn.world.build: the plan, the tiles' jobs up
            # to the last tile, the node tables left after it), median seconds
            "phases": {k: float(np.median([r["seconds"][k] for r in rs]))
                       for k in rs[0]["seconds"]},
            "peak_rss_mib": {k: float(max(r["peak_rss_mib"][k] for r in rs))
                             for k in ("main", "worker")},
            "load_1min": [r["load"] for r in rs],
            f"build_speedup_vs_{base}": float(np.median(
                [b["wall"] / r["wall"] for b, r in zip(runs[base], rs)])),
            f"tiles_speedup_vs_{base}": {"median_of_rounds": float(np.median(ratio)),
                                         "best_vs_best": float(tiles_best(runs[base])
                                                               / tiles.min())}}
    return out


def tiles_best(rs):
    return min(r["seconds"]["tiles"] for r in rs)


def _pass(world, ends, n, budget, sample=None, keep=None):
    """One pass of find_path over the pairs: wall and CPU milliseconds (the
    CPU time is the process's own: the machine's other jobs do not count),
    tiles crossed and read, statuses."""
    ms, cpu, crossed, read, walk_read, status = [], [], [], [], [], {}
    t_start = time.perf_counter()
    for a, b in zip(ends[:n], ends[n:]):
        if budget and time.perf_counter() - t_start > budget:
            break                         # out of time: the paths done so far
        before = world.tiles_read
        before_walk = getattr(world, "walk_reads", 0)
        t0, c0 = time.perf_counter(), time.process_time()
        p = world.find_path(a, b)
        ms.append(1000 * (time.perf_counter() - t0))
        cpu.append(1000 * (time.process_time() - c0))
        read.append(world.tiles_read - before)
        walk_read.append(getattr(world, "walk_reads", 0) - before_walk)
        crossed.append(len(getattr(p, "tiles", []) or []))
        status[p.status] = status.get(p.status, 0) + 1
        if sample is not None:
            sample(len(ms))
        if keep is not None:
            keep.append(p)
    ms, cpu, crossed, read, walk_read = map(np.array, (ms, cpu, crossed, read, walk_read))
    return {
        "paths": len(ms), "status": status,
        "ms": {"median": float(np.median(ms)), "p99": float(np.quantile(ms, 0.99)),
               "mean": float(ms.mean())},
        "cpu_ms": {"median": float(np.median(cpu)), "p99": float(np.quantile(cpu, 0.99)),
                   "mean": float(cpu.mean())},
        "tiles_crossed": {"median": float(np.median(crossed)), "max": int(crossed.max())},
        "tiles_read": {"mean": float(read.mean()), "median": float(np.median(read)),
                       "max": int(read.max())},
        # tiles whose walk arrays were read from their .query file alone
        # (regn.world.walk; the tile itself not read)
        "walk_reads": {"mean": float(walk_read.mean()), "median": float(np.median(walk_read)),
                       "max": int(walk_read.max())},
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


def paths(world_path, n, seed, budget=None, max_tiles=8, warm=False, memory=False,
          trim=False, max_bytes=None, compare_old=False):
    """``n`` random paths on ``regn.load(world, max_tiles=...)``; with
    ``warm`` the same pairs again (every tile read and prepared once); with
    ``compare_old`` the same pairs by the search per tile
    (``World.compiled_walk = False``, :mod:`regn.world.route`): its times
    and the agreement (reachability, length ratio new / old)."""
    import regn
    import gc

    from regn.world.memory import trim as malloc_trim
    from regn.world.world import World
    picker = World.open(world_path, max_tiles=8)
    ends = picker.random_points(2 * n, seed=seed)
    del picker
    world = World.open(world_path, max_tiles=max_tiles, max_bytes=max_bytes, trim=trim)
    if memory:
        world.peak_bytes = {}             # each tile's largest footprint, as it is dropped
    world.find_path(ends[0], ends[n])     # the kernels loaded (compiled) before timing
    world.clear()                         # ... and no tile loaded when memory is measured
    gc.collect()
    malloc_trim()                         # (what reading every tile above left free)
    base = _rss(), _rss("RssAnon"), _rss("RssFile")
    warmed, smaps0 = _status(), _smaps()
    out = {"asked": n, "max_tiles": world.max_tiles, "max_bytes": max_bytes, "trim": trim,
           "distance_km": {"median": float(np.median(np.linalg.norm(ends[:n] - ends[n:],
                                                                    axis=1)) / 1e3)}}
    peak = [0, 0, 0]

    def sample(k):
        if memory and k % 20 == 0:
            now = _rss(), _rss("RssAnon"), _rss("RssFile")
            peak[:] = [max(p, x - b) for p, x, b in zip(peak, now, base)]
    done = []
    slots = getattr(world, "_tile_slots", None)
    before = int(slots.counts[1]) if slots is not None else 0
    out.update(_pass(world, ends, n, budget, sample, done))
    slots = getattr(world, "_tile_slots", None)
    if slots is not None:                 # (both searches of the walk, first pass)
        out["faces_expanded_per_path"] = (float(slots.counts[1]) - before) / max(len(done), 1)
    if warm:
        out["warm"] = _pass(world, ends, n, budget, sample)
    m = world.manifest
    sizes = sorted((t.bytes for t in m.tiles), reverse=True)
    gc.collect()
    mib = 2 ** 20

    def growth():
        return {"rss": (_rss() - base[0]) / mib, "anon": (_rss("RssAnon") - base[1]) / mib,
                "file": (_rss("RssFile") - base[2]) / mib}
    out.update({"loaded_at_end": len(world.loaded), "rss_growth_mib": growth()["rss"],
                "rss_anon_growth_mib": growth()["anon"],
                "rss_file_growth_mib": growth()["file"],
                "largest_tiles_mib": sum(sizes[:world.max_tiles]) / mib,
                "loaded_tiles_mib": sum(m.tiles[i].bytes for i in world.loaded) / mib})
    if memory:
        used = world.memory()
        feet = sorted(world.peak_bytes.values(), reverse=True)[:world.max_tiles]
        budget_b = sum(feet)
        grew = growth()
        by_kind = _minus(_smaps(), smaps0)
        malloc_trim()
        trimmed = growth()
        files = sorted((t.bytes + _size(os.path.splitext(m.tile_path(i))[0] + ".query")
                        for i, t in enumerate(m.tiles)), reverse=True)
        eight = sum(files[:world.max_tiles]) / mib
        typical = world.max_tiles * float(np.median(files)) / mib
        out["memory_goal"] = {
            # the goal: what the World holds, measured as the process's
            # growth over the paths (after the warm-up: numba's kernels and
            # NRT are the baseline, not the World's), within M tiles' files
            # (.rgn + .query) + 20 %
            "tiles_files_mib": {"largest": eight, "median_times_m": typical},
            "limit_mib": 1.2 * eight, "limit_median_mib": 1.2 * typical,
            "growth_mib": grew["rss"], "peak_growth_mib": peak[0] / mib,
            "within": bool(max(grew["rss"], peak[0] / mib) <= 1.2 * eight),
            "within_median": bool(max(grew["rss"], peak[0] / mib) <= 1.2 * typical)}
        out["memory_split"] = {
            # resident MiB at process start (Python, numpy), after importing
            # regn and numba, after the warm-up path and World.clear()
            # (the kernels' code, numba's runtime, and what reading every
            # tile to pick the points left: the baseline growth is measured
            # from), each {"rss", "anon", "file", "shmem"}
            "baseline": {"start": _START, "imported": _IMPORTED, "warmed_up": warmed,
                         "by_kind_at_warm_up": smaps0},
            # the growth over the paths by kind of mapping (bench _smaps)
            "growth_by_kind_mib": by_kind,
            # what world.memory() says it holds, MiB (maps counted whole)
            "world_memory_mib": {
                "own": used["own"] / mib, "mapped": used["mapped"] / mib,
                "index": used.get("index", 0) / mib,
                "total": used.get("total", used["own"] + used["mapped"]) / mib,
                "parts": {p: {k: v / mib for k, v in f.items()}
                          for p, f in used.get("parts", {}).items()},
                "tiles_held": len(used["tiles"])}}
        out["memory"] = {
            "budget_mib": budget_b / mib, "budget_plus_20pc_mib": 1.2 * budget_b / mib,
            "tile_footprint_mib": {"median": float(np.median(list(world.peak_bytes.values())))
                                   / mib, "max": feet[0] / mib, "tiles_seen":
                                   len(world.peak_bytes)},
            "loaded_now_mib": {"own": used["own"] / mib, "mapped": used["mapped"] / mib},
            "growth_mib": grew, "growth_after_trim_mib": trimmed,
            "peak_growth_mib": {"rss": peak[0] / mib, "anon": peak[1] / mib,
                                "file": peak[2] / mib},
            "within_budget": bool(max(grew["rss"], peak[0] / mib) <= 1.2 * budget_b / mib),
            "sidecar_mib": sum(os.path.getsize(os.path.splitext(m.tile_path(i))[0] + ".query")
                               for i in range(len(m.tiles))
                               if os.path.exists(os.path.splitext(m.tile_path(i))[0]
                                                 + ".query")) / mib,
            "tiles_mib": sum(t.bytes for t in m.tiles) / mib}
    if compare_old:
        world.clear()
        old = regn.load(world_path, max_tiles=max_tiles)
        old.compiled_walk = False
        before = []
        out["old"] = _pass(old, ends, len(done), budget, keep=before)
        out["agreement"] = _agreement(done, before)
    import resource
    out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def _size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def tile_reads(world_path, tiles=40, seed=0):
    """Milliseconds (wall, and CPU of this thread) to read a tile (``World.tile``: map, parse, its
    ``.query`` structures put back; the file pages already cached and the
    sha256 checked once before) and then to answer a first path inside it
    (the search state made from them), over ``tiles`` tiles, each twice."""
    from regn.world.world import World
    world = World.open(world_path, max_tiles=1)
    rng = np.random.default_rng(seed)
    pick = rng.choice(world.n_tiles, min(tiles, world.n_tiles), replace=False)
    ends = {}
    for t in pick:
        mesh = world.tile(t)
        ends[t] = mesh.random_points(2, seed=int(t))
        mesh.find_path(*ends[t])                # kernels compiled, files checked
    read, first, read_cpu, first_cpu = [], [], [], []
    for _ in range(2):
        for t in pick:
            world.clear()
            t0, c0 = time.perf_counter(), time.thread_time()
            mesh = world.tile(t)
            t1, c1 = time.perf_counter(), time.thread_time()
            mesh.find_path(*ends[t])
            read.append(1000 * (t1 - t0))
            read_cpu.append(1000 * (c1 - c0))
            first.append(1000 * (time.perf_counter() - t1))
            first_cpu.append(1000 * (time.thread_time() - c1))

    def stats(v):
        return {"median": float(np.median(v)), "p90": float(np.quantile(v, 0.9))}
    return {"tiles": len(pick), "read_ms": stats(read), "read_cpu_ms": stats(read_cpu),
            "first_path_ms": stats(first), "first_path_cpu_ms": stats(first_cpu)}


_START = _IMPORTED = None


def main(argv=None):
    global _START, _IMPORTED
    _START = _status()
    import regn.world.walk  # noqa: F401  (regn, and numba with the walk's kernel module)
    import regn.world._walk_kernels  # noqa: F401
    _IMPORTED = _status()
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
    ap.add_argument("--memory", action="store_true",
                    help="memory against the tiles' footprints (see the module docstring)")
    ap.add_argument("--trim", action="store_true",
                    help="the World gives freed memory back as it drops tiles (malloc_trim)")
    ap.add_argument("--max-bytes", type=float, help="the World's byte budget, MiB")
    ap.add_argument("--speedup", action="store_true",
                    help="measure the tile builds' speed-up with workers (see above)")
    ap.add_argument("--settings", default="1,1x1,2x1,2x2",
                    help="--speedup: W or WxT (workers x threads each), comma-separated")
    ap.add_argument("--rounds", type=int, default=3, help="--speedup: rounds")
    args = ap.parse_args(argv)
    if args.speedup:
        text = json.dumps(speedup(args), indent=1)
        print(text)
        if args.json_out:
            with open(args.json_out, "w") as fh:
                fh.write(text + "\n")
        return
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
    if args.memory and (args.world or world):
        result["tile_reads"] = tile_reads(args.world or world, seed=args.seed)
        print(json.dumps(result["tile_reads"]), file=sys.stderr, flush=True)
    if args.paths:
        result["queries"] = paths(args.world or world, args.paths, args.seed, args.budget,
                                  args.max_tiles, args.warm, args.memory, args.trim,
                                  int(args.max_bytes * 2 ** 20) if args.max_bytes else None,
                                  args.compare_old)
    text = json.dumps(result, indent=1)
    print(text)
    if args.json_out:
        with open(args.json_out, "w") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    main()
