"""Benchmark the segment queries, line_of_sight, raycast_many and raycast
(not part of the tests).

    pip install -e '.[bench]'
    python benchmarks/bench_raycast.py [--quick] [--rounds N] [--demo demo.rgn]

Two maps: bench_query.py's (~15 000 tets, 30 000 faces, a few large holes
with few boundary faces) and the demo asteroid field (``regn demo DIR``
writes it; built here the same way unless ``--demo`` names the file): 40
asteroids, thousands of wall triangles. Segments join two uniform points of
the navigable volume.

Side by side (:mod:`compare`, interleaved rounds, every core allowed on both
sides) with Embree's occlusion query (embreex ``EmbreeScene.run(...,
query='OCCLUDED', dists=lengths)``, float32, on ``mesh.boundary_surface()``;
embreex holds the GIL, so it runs on one thread): a segment is clear when
nothing occludes its ray before its length. The answers are compared
segment by segment; regn is also timed on one thread (``workers=1``).

Then, alone: raycast_many (every field), one raycast call at a time, and
trimesh's ray/mesh intersector (rtree) and brute numpy (Moller-Trumbore
against every wall) on a subset, extrapolated. Peak memory as compare.py
measures it.
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_query import demo_map, make, measure, timeit  # noqa: E402  (the query bench's maps)
from compare import Row, Side, count, peak_memory, print_table, side_by_side  # noqa: E402

COMMAND = "python benchmarks/bench_raycast.py"


def embree_los(m):
    """(a, b) -> clear, with an Embree scene of the map's boundary surface
    built here (once): a segment is clear when nothing occludes its ray
    before its length (float32, as Embree computes)."""
    from embreex import rtcore_scene
    from embreex.mesh_construction import TriangleMesh
    V, F = m.boundary_surface()
    scene = rtcore_scene.EmbreeScene()
    TriangleMesh(scene, np.ascontiguousarray(V[F], dtype=np.float32))

    def clear(a, b):
        d = b - a
        length = np.linalg.norm(d, axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            unit = d / length[:, None]
        hit = scene.run(a.astype(np.float32), unit.astype(np.float32), query="OCCLUDED",
                        dists=length.astype(np.float32))
        return hit == -1
    return clear


def los_rows(m, name, n=100_000, rounds=3):
    """line_of_sight of ``n`` segments against Embree's occlusion query."""
    a, b = m.random_points(n, seed=4), m.random_points(n, seed=5)
    run = embree_los(m)
    mine = Side(lambda: m.line_of_sight(a, b))
    theirs = Side(lambda: run(a, b))
    side_by_side(mine, theirs, rounds)
    one = Side(lambda: m.line_of_sight(a, b, workers=1))
    for _ in range(rounds):
        one.round()
    same = int(np.sum(mine.answer == theirs.answer))
    note = (f"regn on one thread {min(one.times) * 1e3:.1f} ms; "
            f"{np.mean(mine.answer):.3f} clear")
    return [Row(f"line_of_sight, {count(n)} segments", name, "Embree occlusion (embreex)",
                mine.times, theirs.times, same, n, peak_memory(mine.run),
                peak_memory(theirs.run), 1.0, COMMAND, note,
                cores=(mine.cores, theirs.cores))]


def comparison_rows(maps, quick=False, rounds=3):
    """Every comparison of this bench on ``maps`` ([(name, mesh, ...)])."""
    n = 20_000 if quick else 100_000
    return [row for name, m, *_ in maps for row in los_rows(m, name, n, rounds)]


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
    import regn
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--demo", help="the demo map as `regn demo DIR` wrote it (DIR/demo.rgn)")
    args = ap.parse_args()
    n = 20_000 if args.quick else 100_000
    n_alt = 2_000 if args.quick else 5_000
    maps = [("Delaunay", make(2300)[0]),
            ("demo", regn.load(args.demo) if args.demo else demo_map())]
    rows = []
    for name, m in maps:
        print(f"{name}: {m.n_tets} tets, {m.n_faces} faces, "
              f"{len(m.boundary_faces)} boundary faces")
        run_map(m, n, n_alt)
        rows += comparison_rows([(name, m)], args.quick, args.rounds)
    print()
    print_table(rows)


def run_map(m, n, n_alt):
    import trimesh
    from trimesh.ray.ray_triangle import RayMeshIntersector

    a = m.random_points(n, seed=4)
    b = m.random_points(n, seed=5)
    t0 = time.perf_counter()
    m.line_of_sight(a[:4], b[:4])           # compile / load the kernel outside the timing
    print(f"  first call (the segment filter's grid, and kernels loaded): "
          f"{time.perf_counter() - t0:.2f} s")
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
