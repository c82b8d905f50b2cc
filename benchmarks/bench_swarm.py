"""Benchmark the swarm queries of issue 18 (not part of the tests).

    pip install -e '.[bench]'
    python benchmarks/bench_swarm.py [--map FILE] [--n N]

On the demo asteroid field (``regn demo`` writes it; built here when no
``--map`` is given):

* ``find_paths`` on 1 thread and on every core against a loop of
  ``find_path`` (the same answers, checked);
* one ``cost_field`` plus a ``next_waypoint`` for every agent against
  ``find_paths`` for the same agents;
* adding and lifting a blocker (sphere, box; blocking and scaling), and a
  path query through the blocked map.

Timings are the best of three runs (wall clock; the blockers' also in
process CPU time), on whatever the machine has free: on a shared machine
the all-core figure shows only the cores that were idle.
"""

import argparse
import os
import time

import numpy as np

import regn


def best(f, reps=3, clock=time.perf_counter):
    t = np.inf
    for _ in range(reps):
        t0 = clock()
        r = f()
        t = min(t, clock() - t0)
    return t, r


def demo_map(path):
    if path:
        return regn.load(path)
    from regn.builder.generate import DEMO_DIMS, demo_field, generate
    return generate(*demo_field(), dims=DEMO_DIMS, coverage_samples=0)


def bench_find_paths(m, n):
    A, B = m.random_points(n, seed=1), m.random_points(n, seed=2)
    m.find_paths(A[:64], B[:64])                            # caches, kernels
    cores = os.cpu_count() or 1
    for smooth in (False, True):
        t_loop, want = best(lambda: [m.find_path(a, b, smooth=smooth) for a, b in zip(A, B)])
        t_one, one = best(lambda: m.find_paths(A, B, smooth=smooth, workers=1))
        t_all, every = best(lambda: m.find_paths(A, B, smooth=smooth, workers=cores))
        same = all(p.cost == q.cost and np.array_equal(p.points, q.points)
                   for p, q in zip(every, want)) and list(one.status) == list(every.status)
        print(f"find_paths, {n} pairs, smooth={smooth}: loop of find_path {t_loop:.3f} s "
              f"({t_loop / n * 1e6:.0f} us/query); workers=1 {t_one:.3f} s; "
              f"workers={cores} {t_all:.3f} s ({t_loop / t_all:.2f}x the loop); "
              f"same answers: {same}")


def bench_cost_field(m, n):
    goal = m.random_points(1, seed=3)[0]
    agents = m.random_points(n, seed=4)
    m.cost_field(goal).next_waypoint(agents[:4])
    t_field, field = best(lambda: m.cost_field(goal))
    t_way, _ = best(lambda: field.next_waypoint(agents))
    t_paths, paths = best(lambda: m.find_paths(agents, goal, smooth=False))
    agree = np.allclose(field.cost_at(agents), np.where(paths.found, paths.cost, np.inf),
                        rtol=1e-12)
    print(f"cost_field over {m.n_tets} tets: {t_field * 1e3:.2f} ms; next_waypoint for "
          f"{n} agents {t_way * 1e3:.2f} ms; find_paths for them {t_paths * 1e3:.1f} ms; "
          f"costs agree: {agree}")


def bench_blockers(m):
    f = regn.QueryFilter(m)
    centres = m.random_points(2000, seed=5)
    size = float(np.cbrt(np.prod(m.extent) / m.n_tets))     # about one tetrahedron
    for name, add in [("sphere", lambda c, s: f.block_sphere(c, 2 * size, scale=s)),
                      ("box", lambda c, s: f.block_box(c - size, c + size, scale=s))]:
        for scale in (None, 3.0):
            add(centres[0], scale)
            f.clear()

            def cycle():
                for c in centres:
                    f.lift(add(c, scale))
            t, _ = best(cycle)
            cpu, _ = best(cycle, clock=time.process_time)
            h = add(centres[0], scale)
            touched = len(f.blockers[h].tets)
            f.clear()
            print(f"{name} blocker (scale={scale}), {touched} tets touched: add + lift "
                  f"{t / len(centres) * 1e6:.1f} us ({cpu / len(centres) * 1e6:.1f} us of "
                  f"process CPU time)")
    a, b = m.random_points(2, seed=6)
    plain, _ = best(lambda: [m.find_path(a, b) for _ in range(200)])
    for c in m.random_points(20, seed=7):
        f.block_sphere(c, 3 * size)
    blocked, _ = best(lambda: [m.find_path(a, b, filter=f) for _ in range(200)])
    print(f"find_path: {plain / 200 * 1e6:.0f} us; with 20 blocking spheres "
          f"{blocked / 200 * 1e6:.0f} us")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--map", help="a REGN file (default: build the demo field)")
    ap.add_argument("--n", type=int, default=2000, help="queries / agents (default 2000)")
    args = ap.parse_args()
    m = demo_map(args.map)
    print(f"map: {m.n_tets} tetrahedra, {m.n_faces} faces; {os.cpu_count()} cores")
    bench_find_paths(m, args.n)
    bench_cost_field(m, args.n)
    bench_blockers(m)


if __name__ == "__main__":
    main()
