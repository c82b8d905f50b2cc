"""How much faster a batch runs on every core than on one (not part of the
tests).

    python benchmarks/bench_workers.py [--demo demo.rgn] [--rounds N] [--quick]

For each batch query (locate, locate method="grid", line_of_sight,
raycast_many, distance_to_wall, nearest) on the demo map (``regn demo DIR``
writes it; built here the same way unless ``--demo`` names the file): the
batch with ``workers=1`` and with every core, in interleaved rounds, the
answers compared bit for bit. Printed: the best wall time of each, the
speed-up (one thread's best over all cores' best, and the best of the
per-round ratios), and the CPU time over wall time of the fastest all-core
round (the cores actually used). On a machine shared with other work, the
all-core rounds suffer most: run it when the machine is quiet.
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_query import demo_map  # noqa: E402


def same_bits(x, y):
    if hasattr(x, "normal"):
        x = (x.clear, x.status, x.face, x.point, x.t, x.normal)
        y = (y.clear, y.status, y.face, y.point, y.t, y.normal)
    if isinstance(x, tuple):
        return all(same_bits(u, v) for u, v in zip(x, y))
    x, y = np.ascontiguousarray(x), np.ascontiguousarray(y)
    if x.dtype.kind == "U":
        return np.array_equal(x, y)
    return x.shape == y.shape and np.array_equal(x.view(np.uint8), y.view(np.uint8))


def timed(f):
    c0, t0 = time.process_time(), time.perf_counter()
    out = f()
    return time.perf_counter() - t0, time.process_time() - c0, out


def main():
    import regn
    from regn._jit import worker_count
    ap = argparse.ArgumentParser()
    ap.add_argument("--demo")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    m = regn.load(args.demo) if args.demo else demo_map()
    k = 10 if args.quick else 1
    rng = np.random.default_rng(0)
    pts = np.vstack([m.random_points(800_000 // k, seed=1),
                     rng.uniform(-6e4, 6e4, (200_000 // k, 3))])
    a, b = m.random_points(100_000 // k, seed=2), m.random_points(100_000 // k, seed=3)
    far = rng.uniform(-6e4, 6e4, (100_000 // k, 3))
    queries = [
        (f"locate, {len(pts)} points", lambda w: m.locate(pts, workers=w)),
        (f"locate grid, {len(pts) // 5} points",
         lambda w: m.locate(pts[:len(pts) // 5], method="grid", workers=w)),
        (f"line_of_sight, {len(a)} segments", lambda w: m.line_of_sight(a, b, workers=w)),
        (f"raycast_many, {len(a)} segments", lambda w: m.raycast_many(a, b, workers=w)),
        (f"distance_to_wall, {len(far)} points", lambda w: m.distance_to_wall(far, workers=w)),
        (f"nearest, {len(far)} points", lambda w: m.nearest(far, workers=w)),
    ]
    print(f"{m.n_tets} tetrahedra; {worker_count()} cores; best of {args.rounds} "
          f"interleaved rounds")
    print(f"{'batch':34s} {'1 thread':>10s} {'all cores':>10s} {'speed-up':>9s} "
          f"{'best round':>11s} {'cpu/wall':>9s} {'same bits':>9s}")
    for name, q in queries:
        q(1), q(None)                                   # structures, kernels
        one, all_, ratios = [], [], []
        for r in range(args.rounds):
            order = (1, None) if r % 2 == 0 else (None, 1)
            got = {w: timed(lambda: q(w)) for w in order}
            one.append(got[1])
            all_.append(got[None])
            ratios.append(got[1][0] / got[None][0])
        t1 = min(x[0] for x in one)
        best = min(all_, key=lambda x: x[0])
        print(f"{name:34s} {t1 * 1e3:8.1f}ms {best[0] * 1e3:8.1f}ms {t1 / best[0]:8.2f}x "
              f"{max(ratios):10.2f}x {best[1] / best[0]:9.2f} "
              f"{str(same_bits(one[0][2], best[2])):>9s}")


if __name__ == "__main__":
    main()
