"""Benchmark the segment walks, raycast and line_of_sight (not part of the tests).

    pip install -e '.[bench]'
    python benchmarks/bench_raycast.py [--quick]

Two maps: bench_query.py's (~15 000 tets, 30 000 faces, a few large holes
with few boundary faces) and the demo asteroid field of ``regn.generate``
(40 asteroids, thousands of boundary faces). Segments join two uniform
points of the navigable volume. Against, in the same run:

* trimesh's ray/mesh intersector (rtree-accelerated, the usual choice) on
  the boundary surface: a segment is blocked when the first hit along its
  ray lies closer than its end;
* brute numpy: Moller-Trumbore of each segment against every boundary
  triangle, 64 segments at a time.

Both alternatives are timed on a subset and extrapolated; the answers are
compared segment by segment (they may differ only on segments grazing an
edge or vertex, where each method rounds its own way). Single thread
throughout. Peak memory is traced for each method on its batch.
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_query import measure, timeit, two_maps  # noqa: E402  (the query bench's map)


def brute_los(m, a, b, chunk=64):
    """Clear when no boundary triangle meets the segment (0, 1]."""
    tri = m.vertices[m.face_vertices[m.boundary_faces]].astype(np.float64)
    e1, e2, p0 = tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0], tri[:, 0]
    out = np.zeros(len(a), bool)
    for s in range(0, len(a), chunk):
        A, B = a[s:s + chunk], b[s:s + chunk]
        d = (B - A)[:, None]
        h = np.cross(d, e2[None])
        det = (e1[None] * h).sum(2)
        with np.errstate(divide="ignore", invalid="ignore"):
            inv = 1 / det
            sv = A[:, None] - p0[None]
            u = (sv * h).sum(2) * inv
            q = np.cross(sv, e1[None])
            v = (q * d).sum(2) * inv
            t = (q * e2[None]).sum(2) * inv
        hit = (u >= 0) & (v >= 0) & (u + v <= 1) & (t > 1e-12) & (t <= 1)
        out[s:s + chunk] = ~hit.any(1)
    return out


def trimesh_los(surface, a, b):
    """Clear when the ray a -> b first meets the surface beyond b."""
    d = b - a
    length = np.linalg.norm(d, axis=1)
    locs, ray, _ = surface.ray.intersects_location(a, d / length[:, None],
                                                   multiple_hits=False)
    out = np.ones(len(a), bool)
    hit_dist = np.linalg.norm(locs - a[ray], axis=1)
    out[ray[hit_dist <= length[ray]]] = False
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    n = 20_000 if args.quick else 100_000
    n_alt = 2_000 if args.quick else 5_000
    for name, m in two_maps():
        print(f"{name}: {m.n_tets} tets, {m.n_faces} faces, "
              f"{len(m.boundary_faces)} boundary faces")
        run_map(m, n, n_alt)


def run_map(m, n, n_alt):
    import trimesh
    from trimesh.ray.ray_triangle import RayMeshIntersector

    a = m.random_points(n, seed=4)
    b = m.random_points(n, seed=5)
    m.line_of_sight(a[:4], b[:4])           # compile / load the kernel outside the timing
    rounds = [timeit(lambda: m.line_of_sight(a, b), 1)[0] for _ in range(3)]
    t_los = min(rounds)
    los = m.line_of_sight(a, b)
    crossed = [len(m.raycast(x, y).tets) for x, y in zip(a[:2000], b[:2000])]
    _, peak_los, _ = measure(lambda: m.line_of_sight(a, b), 1)
    print(f"  line_of_sight {n}: regn {t_los:.3f} s (rounds "
          f"{', '.join(f'{r:.3f}' for r in rounds)}), {t_los / n * 1e6:.2f} us/segment, "
          f"{np.mean(los):.3f} clear, median {np.median(crossed):.0f} tets crossed; "
          f"peak traced {peak_los / 1e6:.1f} MB")

    t_many, peak_many, many = measure(lambda: m.raycast_many(a, b), 2)
    assert np.array_equal(many.clear, los)
    print(f"  raycast_many {n} (every field but the tets crossed): {t_many:.3f} s, "
          f"{t_many / n * 1e6:.2f} us/segment, {np.mean(many.status == 'hit'):.3f} hits; "
          f"peak traced {peak_many / 1e6:.1f} MB")

    # one segment at a time: the full report
    k = 2000
    t_rc, _ = timeit(lambda: [m.raycast(x, y) for x, y in zip(a[:k], b[:k])], 3)
    print(f"  raycast, one call per segment, {k}: {t_rc / k * 1e6:.1f} us/call")

    surface = trimesh.Trimesh(m.vertices.astype(np.float64), m.face_vertices[m.boundary_faces],
                              process=False)
    surface.ray = RayMeshIntersector(surface)
    trimesh_los(surface, a[:10], b[:10])    # builds the rtree outside the timing
    t_tm, peak_tm, tm = measure(lambda: trimesh_los(surface, a[:n_alt], b[:n_alt]), 1)
    t_tm_all = t_tm * n / n_alt
    print(f"  trimesh RayMeshIntersector (rtree), {n_alt}: {t_tm:.2f} s -> {t_tm_all:.1f} s "
          f"for {n} extrapolated; ratio {t_tm_all / t_los:.0f}x; agreement "
          f"{np.mean(tm == los[:n_alt]):.4f}; peak traced {peak_tm / 1e6:.1f} MB")

    k = n_alt // 5
    t_b, peak_b, bl = measure(lambda: brute_los(m, a[:k], b[:k]), 1)
    t_b_all = t_b * n / k
    print(f"  brute numpy (all boundary triangles), {k}: {t_b:.2f} s -> {t_b_all:.1f} s for "
          f"{n} extrapolated; ratio {t_b_all / t_los:.0f}x; agreement "
          f"{np.mean(bl == los[:k]):.4f}; peak traced {peak_b / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
