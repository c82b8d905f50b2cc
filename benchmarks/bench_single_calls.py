"""What one query costs from Python beyond its compiled kernel (not part of
the tests).

    python benchmarks/bench_single_calls.py [MAP.rgn]

For one-point ``locate``, one ``raycast`` and one unsmoothed ``find_path``:
the time per call of the public method (``mesh.locate(p)``, ...) and the
time per call of the kernel alone, run back to back inside one compiled
loop (no Python, no dispatch), on the same inputs. The difference is the
price of the call. Best of several rounds; the map is the demo map
(``regn demo DIR`` writes it) or the one given.
"""

import sys
import time

import numba
import numpy as np

import regn
from regn.query.locating import _locate_kernels as LK
from regn.query.paths import _path_kernels as PK
from regn.query.sight import _raycast_kernels as RK
from regn.query.locating.locate import locate_tables
from regn.query.paths.path import _graph, search_slot, slot_state


@numba.njit(nogil=True)
def _locate_loop(tables, pts, reps):
    acc = 0
    for _ in range(reps):
        for i in range(pts.shape[0]):
            acc += LK.locate_point(tables, pts[i, 0], pts[i, 1], pts[i, 2])
    return acc


@numba.njit(nogil=True)
def _raycast_loop(tables, a, b, crossed, reps):
    acc = 0
    for _ in range(reps):
        for i in range(a.shape[0]):
            acc += RK.raycast_segment(tables, a[i, 0], a[i, 1], a[i, 2], b[i, 0], b[i, 1],
                                      b[i, 2], crossed)[4]
    return acc


@numba.njit(nogil=True)
def _path_loop(state, a, b, scale, excl, hw, qid0, reps):
    ends = np.empty((2, 3))
    qid = qid0
    acc = 0.0
    for _ in range(reps):
        for i in range(a.shape[0]):
            ends[0] = a[i]
            ends[1] = b[i]
            qid += 1
            acc += PK.find_path(state, ends[0, 0], ends[0, 1], ends[0, 2],
                                ends[1, 0], ends[1, 1], ends[1, 2], scale, excl, True, hw,
                                1.0, qid)[1]
    return acc


def best_per_call(f, n, rounds=7):
    best = np.inf
    for _ in range(rounds):
        t = time.perf_counter()
        f()
        best = min(best, (time.perf_counter() - t) / n)
    return best * 1e6


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "/tmp/x/demo.rgn"
    m = regn.load(path)
    n = 1000
    a, b = m.random_points(n, seed=1), m.random_points(n, seed=2)
    al, bl = [tuple(p) for p in a.tolist()], [tuple(p) for p in b.tolist()]
    tables = locate_tables(m)
    crossed = np.empty(min(256, m.n_tets + 9), np.int64)
    m.locate(a[0]), m.raycast(a[0], b[0]), m.find_path(a[0], b[0], smooth=False)
    rows = []

    def call_loop():
        for i in range(n):
            m.locate(a[i])
    kern = best_per_call(lambda: _locate_loop(tables, a, 1), n)
    rows.append(("locate, one point (3,) array", best_per_call(call_loop, n), kern))

    def call_loop_t():
        for p in al:
            m.locate(p)
    rows.append(("locate, one point tuple", best_per_call(call_loop_t, n), kern))

    def ray_loop():
        for i in range(n):
            m.raycast(a[i], b[i])
    kern = best_per_call(lambda: _raycast_loop(tables, a, b, crossed, 1), n)
    rows.append(("raycast", best_per_call(ray_loop, n), kern))

    g = _graph(m)
    k = 200

    def path_loop():
        for i in range(k):
            m.find_path(a[i], b[i], smooth=False)

    def path_kernel():
        with search_slot(g) as slot:
            qid = slot.qid[0]
            if qid + k > 30000:
                slot.graph.node_u16[:, PK.ST0:PK.ST1 + 1] = 0
                qid = 0
            _path_loop(slot_state(g, slot), a[:k], b[:k], g["ones"],
                       g["no_excl"], 1 - 1e-6, qid, 1)
            slot.qid[0] = qid + k
    rows.append(("find_path, unsmoothed", best_per_call(path_loop, k),
                 best_per_call(path_kernel, k)))
    print(f"{path}: {m.n_tets} tets; {n} random queries (200 for find_path)")
    print(f"{'query':32s} {'call us':>9s} {'kernel us':>10s} {'call - kernel':>14s}")
    for name, call, kern in rows:
        print(f"{name:32s} {call:9.2f} {kern:10.2f} {call - kern:14.2f}")


if __name__ == "__main__":
    main()
