"""Benchmark regn's crowd (issue 30; not part of the tests).

    PYTHONPATH=src python benchmarks/bench_crowd.py [--open 1000,10000] [--rock 1000]
        [--fields demo,400] [--workers N] [--max-steps N]

Side by side in one run:

* **open space against RVO2-3D** (PyPI ``jt-pyrvo23d``, module ``rvo23d``):
  N agents evenly on a sphere (a Fibonacci lattice, radius 100 m at N = 1000,
  growing as sqrt(N) so the crowding is alike), each flying to its
  antipode, in an obstacle-free box (regn: a mesh of the box, its only walls
  its faces, 1 km away). Both at RVO2-3D's own example settings: radius
  1.5 m, top speed 2 m/s, neighbour distance 15 m, 10 neighbours, time
  horizon 10 s, step 0.125 s, and the same preferred velocity (toward the
  goal at top speed, slowing to reach it in a step). Reported: ms per step
  of ``Crowd.step`` and of ``doStep`` (mean over the run, the per-step
  Python of RVO2-3D's preferred velocities not counted), their ratio, the
  largest overlap of any two agents at any step (as a fraction of the
  combined radius) and the pairs overlapping by more than 1 %, how many
  arrive (within half a radius of their goal) and the step the last one
  does;
* **through rock**: ships of radius 50-500 m between random free points of
  the demo asteroid field (``regn demo``'s) and of a 400-asteroid field in
  the same 100 km cube, top speeds 150-400 m/s, max acceleration 60 m/s^2,
  step 0.5 s. Reported: wall penetrations (a centre outside the volume or
  nearer a wall than its radius, at any step; must be 0), the fraction
  arrived within 1.3 x (the length of its initial sphere path / its top
  speed), ms per step.

Peak memory is the process's maximum resident set (ru_maxrss).
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np

import regn


def fibonacci_sphere(n, radius):
    k = np.arange(n) + 0.5
    phi = np.arccos(1 - 2 * k / n)
    theta = np.pi * (1 + 5 ** 0.5) * k
    return radius * np.column_stack([np.cos(theta) * np.sin(phi),
                                     np.sin(theta) * np.sin(phi), np.cos(phi)])


def box_map(h):
    """A cube of half-extent h with no obstacle (a Delaunay of its corners and
    a few inner points)."""
    from scipy.spatial import Delaunay
    rng = np.random.default_rng(0)
    corners = np.array([[x, y, z] for x in (-h, h) for y in (-h, h) for z in (-h, h)])
    pts = np.vstack([corners, rng.uniform(-h, h, (40, 3))])
    return regn.build(pts, Delaunay(pts).simplices, bbox=((-h,) * 3, (h,) * 3), dims=(4, 4, 4))


def overlaps(pos, r):
    """(largest overlap / 2r, pairs overlapping by more than 1 % of 2r)."""
    from scipy.spatial import cKDTree
    pairs = cKDTree(pos).query_pairs(2 * r, output_type="ndarray")
    if len(pairs) == 0:
        return 0.0, 0
    d = np.linalg.norm(pos[pairs[:, 0]] - pos[pairs[:, 1]], axis=1)
    over = (2 * r - d) / (2 * r)
    return float(over.max()), int((over > 0.01).sum())


OPEN = dict(radius=1.5, speed=2.0, neighbor_dist=15.0, neighbors=10, horizon=10.0, dt=0.125)


def run_regn_open(mesh, start, goal, workers, max_steps):
    o = OPEN
    crowd = regn.Crowd(mesh, time_horizon=o["horizon"], neighbor_dist=o["neighbor_dist"],
                       max_neighbors=o["neighbors"], arrive_distance=0.5, workers=workers)
    crowd.add_agents(start, goal, radius=o["radius"], max_speed=o["speed"])
    crowd.step(o["dt"])                               # plans the corridors (not timed)
    t = 0.0
    worst, bad = overlaps(crowd.position, o["radius"])
    steps = 1
    while steps < max_steps and not (crowd.status == 2).all():
        t0 = time.perf_counter()
        crowd.step(o["dt"])
        t += time.perf_counter() - t0
        steps += 1
        w, b = overlaps(crowd.position, o["radius"])
        worst, bad = max(worst, w), bad + b
    arrived = crowd.arrived_step >= 0
    return dict(ms=1e3 * t / max(steps - 1, 1), worst=worst, bad=bad, arrived=int(arrived.sum()),
                last=int(crowd.arrived_step.max()) if arrived.all() else -1, steps=steps)


def run_rvo_open(start, goal, max_steps):
    import rvo23d
    o = OPEN
    sim = rvo23d.PyRVOSimulator(o["dt"], o["neighbor_dist"], o["neighbors"], o["horizon"],
                                o["radius"], o["speed"])
    for p in start:
        sim.addAgent(tuple(p))
    n = len(start)
    arrived_step = np.full(n, -1)
    t = 0.0
    worst = bad = 0
    steps = 0
    pos = start.copy()
    while steps < max_steps and (arrived_step < 0).any():
        to = goal - pos
        d = np.linalg.norm(to, axis=1)
        s = np.minimum(o["speed"], d / o["dt"])
        with np.errstate(invalid="ignore", divide="ignore"):
            pref = np.where(d[:, None] > 0, to / d[:, None] * s[:, None], 0.0)
        for i in range(n):
            sim.setAgentPrefVelocity(i, tuple(pref[i]))
        t0 = time.perf_counter()
        sim.doStep()
        t += time.perf_counter() - t0
        steps += 1
        pos = np.array([sim.getAgentPosition(i) for i in range(n)])
        w, b = overlaps(pos, o["radius"])
        worst, bad = max(worst, w), bad + b
        now = (np.linalg.norm(goal - pos, axis=1) <= 0.5 * o["radius"]) & (arrived_step < 0)
        arrived_step[now] = steps
    arrived = arrived_step >= 0
    return dict(ms=1e3 * t / max(steps, 1), worst=worst, bad=bad, arrived=int(arrived.sum()),
                last=int(arrived_step.max()) if arrived.all() else -1, steps=steps)


def bench_open(sizes, workers, max_steps):
    print("open space, N on a sphere to antipodes (RVO2-3D's example settings)")
    print("(ratio: RVO2-3D's ms/step over regn's, on RVO2-3D's line)")
    print(f"{'N':>6} {'who':>8} {'ms/step':>8} {'ratio':>6} {'worst overlap':>13} "
          f"{'>1% pairs':>9} {'arrived':>8} {'last step':>9}")
    for n in sizes:
        R = 100.0 * np.sqrt(n / 1000)
        start = fibonacci_sphere(n, R)
        goal = -start
        mesh = box_map(float(np.ceil(R + 1000.0)))
        a = run_regn_open(mesh, start, goal, workers, max_steps)
        row(n, "regn", a, "")                      # printed now: RVO2-3D takes long
        b = run_rvo_open(start, goal, max_steps)
        row(n, "RVO2-3D", b, f"{b['ms'] / a['ms']:.2f}x")


def row(n, who, r, ratio):
    print(f"{n:>6} {who:>8} {r['ms']:>8.2f} {ratio:>6} {100 * r['worst']:>12.3f}% "
          f"{r['bad']:>9} {r['arrived']:>8} {r['last']:>9}", flush=True)


def field_map(name):
    from regn.builder.generate import DEMO_DIMS, demo_field, generate
    if name == "demo":
        return generate(*demo_field(), dims=DEMO_DIMS, seed=1, coverage_samples=0)
    from regn.builder.obstacles import random_asteroid_field
    n = int(name)
    h = 50_000.0
    return generate(((-h,) * 3, (h,) * 3), random_asteroid_field(n, seed=1, half_extent=h),
                    seed=1, coverage_samples=0)


def bench_rock(name, n, workers, max_steps):
    t0 = time.perf_counter()
    mesh = field_map(name)
    built = time.perf_counter() - t0
    rng = np.random.default_rng(7)
    start = mesh.random_points(n, seed=1, radius=500)
    goal = mesh.random_points(n, seed=2, radius=500)
    radius = rng.uniform(50, 500, n)
    speed = rng.uniform(150, 400, n)
    dt = 0.5
    crowd = regn.Crowd(mesh, workers=workers)
    crowd.add_agents(start, goal, radius=radius, max_speed=speed, max_accel=60.0)
    t0 = time.perf_counter()
    crowd.step(dt)
    plan = time.perf_counter() - t0
    length = np.array([np.linalg.norm(np.diff(c, axis=0), axis=1).sum() if c is not None
                       else np.nan for c in crowd.corridors])
    budget = 1.3 * length / speed
    pen = 0
    t = 0.0
    steps = 1
    while steps < max_steps and np.isin(crowd.status, (1, 3)).any():
        t1 = time.perf_counter()
        crowd.step(dt)
        t += time.perf_counter() - t1
        steps += 1
        p = crowd.position
        clear = mesh.distance_to_wall(p)
        pen += int(((clear < crowd.radius) | (mesh.locate(p) < 0)).sum())
    arrived_t = np.where(crowd.arrived_step >= 0, crowd.arrived_step * dt, np.inf)
    on_time = np.isfinite(length) & (arrived_t <= budget)
    names, counts = np.unique(crowd.status_names, return_counts=True)
    print(f"{name:>6} {mesh.n_tets:>7} {len(mesh.boundary_faces):>6} {n:>6} {pen:>12} "
          f"{100 * on_time.mean():>8.1f}% {1e3 * t / max(steps - 1, 1):>8.2f} {steps:>6} "
          f"{plan:>7.2f} {built:>6.1f}  {dict(zip(names.tolist(), counts.tolist()))}",
          flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--open", default="1000,10000", help="crowd sizes in open space ('' none)")
    ap.add_argument("--rock", type=int, default=1000, help="ships through rock (0: none)")
    ap.add_argument("--fields", default="demo,400", help="asteroid fields: demo and/or counts")
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--max-steps", type=int, default=20_000)
    args = ap.parse_args()
    import os
    print(f"cores: {len(os.sched_getaffinity(0))}, workers: {args.workers or 'all'}")
    if args.open:
        bench_open([int(x) for x in args.open.split(",")], args.workers, args.max_steps)
    if args.rock:
        print("\nthrough rock: ships r 50-500 m, 150-400 m/s, 60 m/s^2, dt 0.5 s")
        print(f"{'field':>6} {'tets':>7} {'walls':>6} {'ships':>6} {'penetrations':>12} "
              f"{'on time':>9} {'ms/step':>8} {'steps':>6} {'plan s':>7} {'map s':>6}  status")
        for name in args.fields.split(","):
            bench_rock(name, args.rock, args.workers, args.max_steps)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak memory (max RSS): {peak:.0f} MB")


if __name__ == "__main__":
    main()
