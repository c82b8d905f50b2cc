"""Build time of a disc-sized map from obstacles, as a ratio to scipy's Delaunay.

    python benchmarks/bench_build.py [--repeat 3] [--seed 1] [--detail 1]
    python benchmarks/bench_build.py --fields 10,40,100,200,400 [--seed 1]
    python benchmarks/bench_build.py --levels DIR [--only rooms.obj ...]

The demo stage (a 100 km cube, 10x10x10 cells, ``random_asteroid_field(40,
seed=1)``) gives a map the size of the largest on the disc (~14 000
tetrahedra). Times (best of N): ``scipy.spatial.Delaunay`` alone on the very
points the builder triangulates (the reference), the free-space
tetrahedralisation (sampling + Delaunay + exact clearance cull), ``regn.build``
(faces, adjacency, grid), and the whole ``regn.generate`` without the Monte
Carlo coverage; then the coverage (200 000 samples) and the clearance check.

``--fields`` builds asteroid fields of those sizes in the demo's cube at the
defaults (what ``regn build --asteroids N --seed S`` does: detail and grid
chosen to fit, coverage from 200 000 samples) and prints, for each, the
seconds, the detail and grid chosen, the counts and the coverage.

``--levels DIR`` builds the procedural levels of ``make_levels.py`` (soups,
a glTF scene, voxel caves, an asteroid field of meshes) and checks them
against their inputs (see ``levels_bench.py``).
"""

import argparse
import time

import numpy as np
from scipy.spatial import Delaunay

from regn.builder.generate import DEMO_DIMS, demo_field, generate
from regn.builder.tetmesh import build
from regn.builder.world import (clearance_violations, free_space_samples,
                              free_volume_coverage, tetrahedralize_free_space)


def best(fn, repeat):
    out, times = None, []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def fields(sizes, seed):
    """One row per asteroid count: generate at the defaults, timed."""
    from regn.builder.obstacles import random_asteroid_field
    print("asteroids  seconds  detail  grid      vertices  tets    faces   refs    coverage")
    for n in sizes:
        bbox, _ = demo_field(seed=seed)
        obs = random_asteroid_field(n, seed=seed, half_extent=bbox[1][0])
        t = time.perf_counter()
        mesh = generate(bbox, obs, seed=seed)
        seconds = time.perf_counter() - t
        rep = mesh.build_report
        print(f"{n:9d}  {seconds:7.1f}  {rep['detail']:6.3g}  {'x'.join(map(str, mesh.dims)):8s}"
              f"  {mesh.n_vertices:8d}  {mesh.n_tets:6d}  {mesh.n_faces:6d}  {mesh.n_refs:6d}"
              f"  {100 * rep['coverage']:6.2f} %")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--detail", type=float, default=1.0)
    ap.add_argument("--levels", metavar="DIR", help="the levels benchmark on make_levels.py's DIR")
    ap.add_argument("--only", nargs="*", help="--levels: these inputs only")
    ap.add_argument("--fields", metavar="N,N,...",
                    help="asteroid counts to build at the defaults, one row each")
    args = ap.parse_args()
    if args.levels:
        import levels_bench
        levels_bench.run(args.levels, args.only)
        return
    if args.fields:
        generate(*demo_field(n=5), coverage_samples=0)        # compile the kernels first
        fields([int(x) for x in args.fields.split(",")], args.seed)
        return
    bbox, obs = demo_field(seed=args.seed)
    lo, hi = bbox
    pts = free_space_samples(lo, hi, obs, detail=args.detail, seed=args.seed)
    t_del, _ = best(lambda: Delaunay(pts), args.repeat)
    t_tet, (v, t, rep) = best(lambda: tetrahedralize_free_space(
        lo, hi, obs, detail=args.detail, seed=args.seed), args.repeat)
    t_build, mesh = best(lambda: build(v, t, bbox=bbox, dims=DEMO_DIMS), args.repeat)
    t_gen, _ = best(lambda: generate(bbox, obs, dims=DEMO_DIMS, detail=args.detail,
                                     seed=args.seed, coverage_samples=0), args.repeat)
    t_cov, cov = best(lambda: free_volume_coverage(mesh.vertices, mesh.tets, lo, hi, obs,
                                                   samples=200_000), 1)
    t_clr, viol = best(lambda: clearance_violations(mesh.vertices, mesh.tets, obs), 1)
    print(f"demo field seed {args.seed}, detail {args.detail:g}: {len(obs)} asteroids, "
          f"{len(pts)} sample points -> {mesh.n_vertices} vertices, {mesh.n_tets} tets, "
          f"{mesh.n_faces} faces, {mesh.n_refs} cell refs (dims {mesh.dims})")
    print(f"scipy Delaunay on the same points   {t_del * 1e3:8.1f} ms   1.00x")
    sec = {k: v * 1e3 for k, v in rep["seconds"].items()}
    print(f"tetrahedralize_free_space           {t_tet * 1e3:8.1f} ms  {t_tet / t_del:5.2f}x "
          f"(sample {sec['sample']:.0f}, delaunay {sec['delaunay']:.0f}, cull "
          f"{sec['clearance_cull']:.0f}, cleanup {sec['cleanup']:.0f} ms)")
    print(f"regn.build (faces, adjacency, grid)  {t_build * 1e3:8.1f} ms  {t_build / t_del:5.2f}x")
    print(f"regn.generate without coverage      {t_gen * 1e3:8.1f} ms  {t_gen / t_del:5.2f}x")
    print(f"free-volume coverage: {100 * cov['coverage']:.2f} % of the free volume "
          f"(free {100 * cov['free_fraction']:.2f} % of the box; 200 000 samples, "
          f"{t_cov:.2f} s); samples located inside an obstacle: {cov['in_obstacle_hits']}")
    print(f"clearance: {viol} tetrahedra meet an obstacle (exact test, {t_clr * 1e3:.0f} ms)")
    print(f"tets dropped: {rep['dropped_obstacle']} meeting an obstacle, "
          f"{rep['dropped_degenerate']} degenerate, {rep['dropped_slivers']} surface slivers, "
          f"{rep['dropped_pinching']} pinching, {rep['dropped_specks']} in specks; "
          f"{np.mean(mesh.tet_volumes):.3g} m^3 mean volume")


if __name__ == "__main__":
    main()
