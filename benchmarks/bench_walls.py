"""Benchmark the wall queries, distance_to_wall and nearest (not part of the tests).

    pip install -e '.[bench]'
    python benchmarks/bench_walls.py [--quick]

On the two maps of bench_query.py (its Delaunay map, few large walls; the
demo asteroid field ``regn demo`` writes, thousands of small ones),
distance_to_wall of 100 000 points uniform in the navigable volume, side by
side (:mod:`compare`) with the tools a user would otherwise reach for, on
the map's boundary surface:

* libigl's AABB tree (``igl.AABB``, built once, then ``squared_distance``;
  libigl runs it on its own threads);
* ``trimesh.proximity.closest_point`` (rtree candidates, then exact
  point/triangle distances), timed on 5 000 points and extrapolated.

Distances are compared point by point (equal within 1e-6 m). Then nearest,
on points in a box 20 % larger than the map (half of them in asteroids or
outside), and the build time and size of the wall hierarchy and the wall
grid.

Measured on the 2-core VM (another process busy on it at times), 100 000
points, median of the rounds against libigl: 8.7× on the demo map (regn
14-21 ms, libigl 0.12-0.22 s) and 8.1× on the Delaunay map (16-21 ms
against 0.13-0.15 s); 1.9× and 1.8× with the hierarchy alone (110 and 77
ms). The grid: 37^3 cells, 1.13 M entries, 9 MiB, built in 0.18 s on the
demo map; 21^3 cells, 0.7 MiB, 20 ms on the Delaunay map. nearest of the
100 000 box points: 0.03 s on either map.
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_query import measure, two_maps  # noqa: E402
from compare import Row, Side, count, peak_memory, print_table, side_by_side  # noqa: E402

COMMAND = "python benchmarks/bench_walls.py"
SAME = 1e-6          # metres: two distances are the same answer


def boundary_surface(m):
    """(vertices (V,3) float64, triangles (B,3) int64) of the map's walls."""
    return (np.ascontiguousarray(m.vertices, dtype=np.float64),
            np.ascontiguousarray(m.face_vertices[m.boundary_faces], dtype=np.int64))


def libigl_distance(m):
    """points -> distance to the boundary surface, with a libigl AABB tree
    built here (once)."""
    import igl
    V, F = boundary_surface(m)
    tree = igl.AABB()
    tree.init(V, F)
    return lambda q: np.sqrt(tree.squared_distance(V, F, q)[0])


def trimesh_distance(m):
    """points -> distance to the boundary surface with trimesh."""
    import trimesh
    V, F = boundary_surface(m)
    surface = trimesh.Trimesh(V, F, process=False)
    return lambda q: trimesh.proximity.closest_point(surface, q)[1]


def wall_rows(m, name, n=100_000, rounds=3, n_trimesh=5_000):
    """distance_to_wall of ``n`` points of the volume against libigl and trimesh."""
    pts = m.random_points(n, seed=6)
    rows = []
    for label, make, k, goal in (("libigl AABB squared_distance", libigl_distance, n, 5.0),
                                 (f"trimesh closest_point ({n_trimesh} points, "
                                  f"extrapolated)", trimesh_distance, n_trimesh, None)):
        run = make(m)
        mine = Side(lambda: m.distance_to_wall(pts))
        theirs = Side(lambda: run(pts[:k]))
        side_by_side(mine, theirs, rounds)
        alt = [t * n / k for t in theirs.times]
        diff = np.abs(mine.answer[:k] - theirs.answer)
        note = f"largest difference {diff.max():.2g} m" + (
            f"; its peak is for {k} points" if k < n else "")
        rows.append(Row(f"distance_to_wall, {count(n)} points", name, label,
                        mine.times, alt, int(np.sum(diff <= SAME)), k,
                        peak_memory(mine.run), peak_memory(theirs.run), goal, COMMAND, note,
                        cores=(mine.cores, theirs.cores)))
    return rows


def comparison_rows(maps, quick=False, rounds=3):
    """Every comparison of this bench on ``maps`` ([(name, mesh, ...)])."""
    n, n_trimesh = (20_000, 2_000) if quick else (100_000, 5_000)
    return [row for name, m, *_ in maps for row in wall_rows(m, name, n, rounds, n_trimesh)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    n = 20_000 if args.quick else 100_000
    rows = []
    for name, m in two_maps():
        print(f"{name}: {m.n_tets} tets, {len(m.boundary_faces)} boundary faces")
        t0 = time.perf_counter()
        m.distance_to_wall(m.random_points(4, seed=1))
        print(f"  set-up (the wall search's structures, once per map): "
              f"{time.perf_counter() - t0:.2f} s")
        from regn.query.walls.nearest import _build_bvh, _build_grid, _wall_tris
        t0 = time.perf_counter()
        bvh = _build_bvh(_wall_tris(m)["tri"])
        print(f"  BVH build: {(time.perf_counter() - t0) * 1e3:.1f} ms")
        for workers in (1, None):
            t0 = time.perf_counter()
            g = _build_grid(bvh, workers)
            print(f"  wall grid build ({workers or 'all'} threads): "
                  f"{(time.perf_counter() - t0) * 1e3:.0f} ms")
        print(f"  wall grid: {' x '.join(map(str, g.dims))} cells, {len(g.tris)} list entries, "
              f"{sum(a.nbytes for a in g) / 2**20:.1f} MiB")
        lo, hi = np.asarray(m.bbox_min, float), np.asarray(m.bbox_max, float)
        box = (lo + hi) / 2 + np.random.default_rng(7).uniform(-1.2, 1.2, (n, 3)) * (hi - lo) / 2
        t_n, peak_n, _ = measure(lambda: m.nearest(box))
        print(f"  nearest, {n} points in a box 20 % larger than the map: {t_n:.3f} s "
              f"(traced peak {peak_n / 1e6:.0f} MB)")
        rows += comparison_rows([(name.split()[0], m)], args.quick, args.rounds)
    print()
    print_table(rows)


if __name__ == "__main__":
    main()
