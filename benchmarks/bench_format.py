"""Load and verify time on a disc-sized map, as ratios to reading the file.

    python benchmarks/bench_format.py [--repeat 30]

Builds a map the size of the largest on the disc (~2 900 vertices, ~15 000
tetrahedra, ~31 000 faces), saves it, then times (best of N, warm page cache):
reading the file's bytes; ``regn.load``; ``regn.load`` + every array touched;
the full ``regn.verify`` (every check, strict); ``dumps``. Peak memory of a
load + verify is measured with tracemalloc.
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
    keep = rng.random(len(tets)) > 0.05          # some holes
    return regn.build(pts, tets[keep], bbox=(-h * np.ones(3), h * np.ones(3)),
                      dims=(10, 10, 10))


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=30)
    args = ap.parse_args(argv)
    mesh = disc_sized_map()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "disc.rgn")
        regn.save(mesh, path)
        size = os.path.getsize(path)

        def raw():
            with open(path, "rb") as fh:
                fh.read()

        def touch_all():
            m = regn.load(path)
            for name in ("vertices", "tets", "tet_faces", "neighbors", "face_normals",
                         "portal_costs", "grid_csr"):
                getattr(m, name)

        t_raw = best(raw, args.repeat)
        t_load = best(lambda: regn.load(path), args.repeat)
        t_arrays = best(touch_all, max(3, args.repeat // 5))
        t_verify = best(lambda: regn.verify(regn.load(path), strict=True),
                        max(3, args.repeat // 10))
        t_dumps = best(lambda: mesh.dumps(), max(3, args.repeat // 5))
        tracemalloc.start()
        report = regn.verify(regn.load(path), strict=True)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    v, t, f = mesh.counts[:3]
    print(f"map: {v} vertices, {t} tetrahedra, {f} faces, {mesh.n_refs} refs; "
          f"file {size / 1e6:.2f} MB; verify ok={report.ok}")
    print(f"read bytes        {t_raw * 1e3:8.3f} ms   1.0x")
    print(f"load              {t_load * 1e3:8.3f} ms   {t_load / t_raw:5.1f}x   (goal <= 3x)")
    print(f"load + arrays     {t_arrays * 1e3:8.3f} ms   {t_arrays / t_raw:5.1f}x")
    print(f"verify --strict   {t_verify * 1e3:8.3f} ms   {t_verify / t_raw:5.1f}x   (goal <= 100x)")
    print(f"dumps             {t_dumps * 1e3:8.3f} ms   {t_dumps / t_raw:5.1f}x")
    print(f"peak memory of load + verify: {peak / 1e6:.1f} MB "
          f"({peak / size:.1f}x the file)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
