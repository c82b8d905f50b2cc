"""Benchmark the wall queries, distance_to_wall and nearest (not part of the tests).

    pip install -e '.[bench]'
    python benchmarks/bench_walls.py [--quick]

On the two maps of bench_raycast.py (bench_query's Delaunay map, few large
walls; the demo asteroid field, thousands of small ones), against
``trimesh.proximity.closest_point`` on the boundary surface (rtree
candidates, then exact point/triangle distances), the tool a user would
otherwise reach for. Points: uniform in the navigable volume (clearance
queries) and uniform in a box 20 % larger than the map's (nearest: half
of them are in asteroids or outside). trimesh is timed on a subset and
extrapolated; distances are compared point by point. Peak memory traced.
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_query import measure, two_maps  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    import trimesh

    n = 20_000 if args.quick else 100_000
    n_alt = 2_000 if args.quick else 5_000
    for name, m in two_maps():
        print(f"{name}: {m.n_tets} tets, {len(m.boundary_faces)} boundary faces")
        surf = trimesh.Trimesh(m.vertices.astype(np.float64),
                               m.face_vertices[m.boundary_faces], process=False)
        lo, hi = np.asarray(m.bbox_min, float), np.asarray(m.bbox_max, float)
        mid, half = (lo + hi) / 2, (hi - lo) / 2
        rng = np.random.default_rng(7)
        sets = [("in the volume", m.random_points(n, seed=6)),
                ("box +20 %", mid + rng.uniform(-1.2, 1.2, (n, 3)) * half)]
        t0 = time.perf_counter()
        m.distance_to_wall(sets[0][1][:4])
        print(f"  set-up (the wall search's structures, once per map): "
              f"{time.perf_counter() - t0:.2f} s")
        from regn.query.nearest import _build_bvh, _wall_tris
        t0 = time.perf_counter()
        _build_bvh(_wall_tris(m)["tri"])
        print(f"  BVH build (numpy, with the compiled flatness test): "
              f"{(time.perf_counter() - t0) * 1e3:.1f} ms")
        for label, pts in sets:
            t_d, peak_d, dw = measure(lambda: m.distance_to_wall(pts))
            t_n, peak_n, _ = measure(lambda: m.nearest(pts))
            t_t, peak_t, (_, ref, _) = measure(
                lambda: trimesh.proximity.closest_point(surf, pts[:n_alt]))
            t_t_all = t_t * n / n_alt
            err = np.max(np.abs(dw[:n_alt] - ref))
            print(f"  {label}, {n} points: distance_to_wall {t_d:.2f} s "
                  f"({t_d / n * 1e6:.1f} us/point, peak {peak_d / 1e6:.0f} MB), nearest "
                  f"{t_n:.2f} s (peak {peak_n / 1e6:.0f} MB); trimesh closest_point "
                  f"{t_t:.2f} s for {n_alt} -> {t_t_all:.1f} s extrapolated (peak "
                  f"{peak_t / 1e6:.0f} MB); ratio {t_t_all / t_d:.1f}x; largest distance "
                  f"difference {err:.2g} m")


if __name__ == "__main__":
    main()
