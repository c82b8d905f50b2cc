"""Load and verify time on a disc-sized map, as ratios to reading the file.

    python benchmarks/bench_format.py [--repeat 30] [--cpu]

Builds a map the size of the largest on the disc (~2 900 vertices, ~18 000
tetrahedra, ~37 000 faces), saves it, then times (best of N, warm page cache):
reading the file's bytes; ``regn.load``; ``regn.load`` + every array touched;
``regn.verify`` (default and ``strict=True``: every check); ``dumps``; and
verify's parts one by one on one thread (parsing, then each part's checks
with what they compute; the grid rule's membership test, the boundary's
pinches and the overlap test on their own). Peak memory of a load +
verify is measured with tracemalloc. The compiled kernels are warmed (and
numba's on-disk cache filled) before timing. ``--cpu`` times process CPU
time instead of wall time (steadier on a busy machine).
"""

import argparse
import os
import sys
import tempfile
import time
import tracemalloc

import numpy as np
from scipy.spatial import Delaunay

import regn
from regn.builder.unpinch import unpinch


def disc_sized_map(seed=0, n_points=2_900, h=250_000.0):
    rng = np.random.default_rng(seed)
    corners = np.array([[x, y, z] for z in (-h, h) for y in (-h, h) for x in (-h, h)])
    # a coarse jittered lattice for open space, and dense clusters where the
    # asteroids are: small tetrahedra there, as on a real stage (uniform
    # random points would make long tetrahedra crossing too many cells)
    k = 9
    g = (np.arange(k) + 0.5) / k * 2 * h - h
    lattice = np.stack(np.meshgrid(g, g, g, indexing="ij"), -1).reshape(-1, 3)
    lattice += rng.uniform(-0.3, 0.3, lattice.shape) * (2 * h / k)
    n_cluster = n_points - 8 - len(lattice)
    centres = rng.uniform(-0.8 * h, 0.8 * h, (12, 3))
    cluster = centres[rng.integers(0, 12, n_cluster)] + rng.normal(0, 0.06 * h, (n_cluster, 3))
    pts = np.concatenate([corners, lattice, np.clip(cluster, -h, h)])
    tets = Delaunay(pts).simplices
    keep = rng.random(len(tets)) > 0.05          # some holes, without pinches
    tets = unpinch(pts, tets[keep])[0]
    return regn.build(pts, tets, bbox=(-h * np.ones(3), h * np.ones(3)),
                      dims=(10, 10, 10))


CLOCK = time.perf_counter


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t = CLOCK()
        fn()
        times.append(CLOCK() - t)
    return min(times)


def stages(path, repeat):
    """Best time of each part's checks, on the caller's thread, each in a
    fresh run (so computing what its checks need: the part's kernels, the
    records decoded for them)."""
    from regn.checks import chunk, faces, geometry, grid, header, roundtrip, tets, topology
    from regn.checks._run import Run
    data = open(path, "rb").read()

    def parsed():
        m = regn.loads(data)
        m.check_records()
        return m

    out = {"parse + record checks": best(parsed, repeat)}
    m = parsed()

    def checks_of(*parts):
        def run():
            r = Run(m, data)
            r.threaded = False
            for part in parts:
                for statement in part.statements:
                    statement.run(r)
        return run

    # the pinches read the face planes' measures (timed with the tetrahedra)
    measured = Run(m, data)
    measured.threaded = False
    measured.fact(tets.measures)
    for name, fn in (("chunk, POF0, sections", checks_of(chunk.PART)),
                     ("header", checks_of(header.PART)),
                     ("grid records", checks_of(grid.PART)),
                     ("faces", checks_of(faces.PART)),
                     ("tetrahedra", checks_of(tets.PART)),
                     ("geometry and grid rule", checks_of(geometry.VERTICES, geometry.GRID)),
                     ("  of it: grid membership",
                      lambda: geometry.grid_pairs(Run(m, data))),
                     ("the mesh as a whole", checks_of(topology.PART)),
                     ("  of it: pinches", lambda: topology.pinches(measured)),
                     ("  of it: overlaps", lambda: _one_thread(topology.overlaps, Run(m, data))),
                     ("round trip (dumps + compare)", checks_of(roundtrip.PART))):
        out[name] = best(fn, repeat)
    return out


def _one_thread(fact, run):
    """``fact(run)`` on the caller's thread only, as on a small map."""
    run.threaded = False
    return fact(run)


def main(argv=None):
    global CLOCK
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--cpu", action="store_true", help="time process CPU time")
    args = ap.parse_args(argv)
    if args.cpu:
        CLOCK = time.process_time
    mesh = disc_sized_map()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "disc.rgn")
        regn.save(mesh, path)
        size = os.path.getsize(path)
        t = time.perf_counter()
        regn.verify(regn.load(path), strict=True)       # compile / load kernels
        t_first = time.perf_counter() - t

        def raw():
            with open(path, "rb") as fh:
                fh.read()

        def touch_all():
            m = regn.load(path)
            for name in ("vertices", "tets", "tet_faces", "neighbors", "face_normals",
                         "portal_costs", "grid_csr"):
                getattr(m, name)

        n_v = max(3, args.repeat // 3)
        t_raw = best(raw, args.repeat)
        t_load = best(lambda: regn.load(path), args.repeat)
        t_arrays = best(touch_all, max(3, args.repeat // 5))
        t_default = best(lambda: regn.verify(regn.load(path)), n_v)
        t_strict = best(lambda: regn.verify(regn.load(path), strict=True), n_v)
        t_dumps = best(lambda: mesh.dumps(), max(3, args.repeat // 5))
        t_stages = stages(path, n_v)
        tracemalloc.start()
        report = regn.verify(regn.load(path), strict=True)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    v, t, f = mesh.counts[:3]
    clock = "CPU" if args.cpu else "wall"
    print(f"map: {v} vertices, {t} tetrahedra, {f} faces, {mesh.n_refs} refs; "
          f"file {size / 1e6:.2f} MB; verify ok={report.ok}; {clock} time, best of N")
    print(f"read bytes        {t_raw * 1e3:8.3f} ms   {1.0:6.1f}x")
    print(f"load              {t_load * 1e3:8.3f} ms   {t_load / t_raw:6.1f}x   (goal <= 3x)")
    print(f"load + arrays     {t_arrays * 1e3:8.3f} ms   {t_arrays / t_raw:6.1f}x")
    print(f"verify            {t_default * 1e3:8.3f} ms   {t_default / t_raw:6.1f}x")
    print(f"verify --strict   {t_strict * 1e3:8.3f} ms   {t_strict / t_raw:6.1f}x   "
          f"(goal <= 100x)")
    print(f"dumps             {t_dumps * 1e3:8.3f} ms   {t_dumps / t_raw:6.1f}x")
    print("verify stages:")
    for name, s in t_stages.items():
        print(f"  {name:34s} {s * 1e3:8.3f} ms   {s / t_raw:6.1f}x")
    print(f"first verify in this process (kernels compiled or loaded from the "
          f"cache): {t_first * 1e3:.0f} ms")
    print(f"peak memory of load + verify: {peak / 1e6:.1f} MB "
          f"({peak / size:.1f}x the file)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
