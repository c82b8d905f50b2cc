"""Benchmark the navigation queries (not part of the tests).

    python benchmarks/bench_query.py [--quick]

A ~15 000-tet map (Delaunay of ~2 300 points in a +-50 000 box with holes;
the format's u16 reference limit forces a 6x6x6 grid at that size):
locate 1 M points vs scipy Delaunay.find_simplex, 200 path queries vs
networkx.astar_path (costs asserted equal), scaling, peak memory. The
segment walks have their own bench, bench_raycast.py.
"""

import argparse
import resource
import sys
import time
import tracemalloc

import numpy as np
from scipy.spatial import Delaunay

import regn
from regn.format.layout import PORTAL_PAIRS

L = 50_000.0


def make(n, seed=0, holes=8, dims=(6, 6, 6)):
    rng = np.random.default_rng(seed)
    pts = np.vstack([[[x, y, z] for x in (-L, L) for y in (-L, L) for z in (-L, L)],
                     rng.uniform(-L, L, (n, 3))])
    tets = Delaunay(pts).simplices
    cen = pts[tets].mean(axis=1)
    keep = np.ones(len(tets), bool)
    for c in rng.uniform(-0.6 * L, 0.6 * L, (holes, 3)):
        keep &= np.linalg.norm(cen - c, axis=1) > 0.12 * L
    return regn.build(pts, tets[keep], bbox=((-L,) * 3, (L,) * 3), dims=dims), pts


def two_maps():
    """The segment and wall benches' maps: [(name, mesh)] for this file's
    Delaunay map (few large walls) and the demo asteroid field (thousands of
    small ones)."""
    from regn.builder.generate import DEMO_DIMS, demo_field, generate
    return [("Delaunay map of bench_query.py", make(2300)[0]),
            ("demo asteroid field (regn.generate)",
             generate(*demo_field(), dims=DEMO_DIMS, coverage_samples=0))]


def measure(f, reps=2):
    """(best of ``reps`` untraced runs in s, traced peak bytes of one more
    run, result): traced apart, as tracing slows allocation-heavy code."""
    best, r = timeit(f, reps)
    tracemalloc.start()
    f()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return best, peak, r


def timeit(f, reps=3):
    best = np.inf
    for _ in range(reps):
        t0 = time.perf_counter()
        r = f()
        best = min(best, time.perf_counter() - t0)
    return best, r


def nx_graph(m):
    import networkx as nx
    G = nx.Graph()
    nb, tf, pc = m.neighbors, m.tet_faces, m.portal_costs
    for T in range(m.n_tets):
        for p, (i, j) in enumerate(PORTAL_PAIRS):
            if nb[T, i] >= 0 and nb[T, j] >= 0:
                G.add_edge(int(tf[T, i]), int(tf[T, j]), weight=float(pc[T, p, 0]))
    return G


def nx_query(G, m, a, b, cen):
    """One query as a networkx user would write it: link start and goal to
    their tets' portal faces, A* with a plain-Python Euclidean heuristic
    (``cen``: face centroids as tuples, precomputed once)."""
    import math
    import networkx as nx
    S, T = m.locate(np.stack([a, b]))
    G.add_node("s")
    G.add_node("g")
    for t, pt, node in ((S, a, "s"), (T, b, "g")):
        for f, nbr in zip(m.tet_faces[t], m.neighbors[t]):
            if nbr >= 0:
                G.add_edge(node, int(f), weight=math.dist(cen[f], pt))
    goal = tuple(b)

    def h(u, v):
        return 0.0 if isinstance(u, str) else math.dist(cen[u], goal)
    try:
        p = nx.astar_path(G, "s", "g", heuristic=h, weight="weight")
        c = nx.path_weight(G, p, "weight")
    except nx.NetworkXNoPath:
        c = np.inf
    G.remove_node("s")
    G.remove_node("g")
    return c


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    nloc = 200_000 if args.quick else 1_000_000
    m, pts = make(2300)
    print(f"map: {m.n_tets} tets, {m.n_faces} faces, {m.n_refs} refs, dims {m.dims}")
    rng = np.random.default_rng(1)
    q = rng.uniform(-L, L, (nloc, 3))
    t0 = time.perf_counter()
    m.locate(q[:10])
    print(f"locate one-off setup (fine grid + numba load): {time.perf_counter() - t0:.2f} s")
    t_loc, r = timeit(lambda: m.locate(q))
    D = Delaunay(pts)
    t_fs, _ = timeit(lambda: D.find_simplex(q))
    from regn.query.locate import locate
    t_grid, _ = timeit(lambda: locate(m, q[:100_000], method="grid"), 1)
    print(f"locate {nloc} pts: regn {t_loc:.3f} s, find_simplex {t_fs:.3f} s, "
          f"ratio {t_fs / t_loc:.1f}x  (method='grid' chain: {t_grid * nloc / 1e5:.2f} s "
          f"extrapolated)")

    # paths
    A = m.random_points(200, seed=2)
    B = m.random_points(200, seed=3)
    m.find_path(A[0], B[0])                                 # compile / warm
    from regn.query._path_kernels import ST0, ST1
    from regn.query.path import _graph
    G = nx_graph(m)
    cen = [tuple(c) for c in m.face_centroids.tolist()]
    nx_query(G, m, A[0], B[0], cen)                         # warm
    # three rounds, each all 200 regn queries back to back and then all 200
    # networkx ones: the ratio is printed per round (this shared virtual
    # machine has slow spells) and over all rounds' queries
    rounds = 3
    mine, t_mine, expanded, ref, t_ref, ratios = [], [], [], [], [], []
    t_smooth, ratios_smooth = [], []
    m.find_path(A[0], B[0], smooth=True)                    # the smoother's kernel too
    for r in range(rounds):
        tm, tr, ts = [], [], []
        for a, b in zip(A, B):
            t0 = time.perf_counter()
            p = m.find_path(a, b, smooth=False)
            tm.append(time.perf_counter() - t0)
            if r == 0:
                mine.append(p)
        for a, b in zip(A, B):          # the default call: search, then smoothing
            t0 = time.perf_counter()
            m.find_path(a, b)
            ts.append(time.perf_counter() - t0)
        for a, b in zip(A, B):
            t0 = time.perf_counter()
            c = nx_query(G, m, a, b, cen)
            tr.append(time.perf_counter() - t0)
            if r == 0:
                ref.append(c)
        t_mine += tm
        t_ref += tr
        t_smooth += ts
        ratios.append(np.median(tr) / np.median(tm))
        ratios_smooth.append(np.median(tr) / np.median(ts))
    for a, b in zip(A, B):              # the search's work, counted untimed
        m.find_path(a, b, smooth=False)
        g = _graph(m)                   # faces settled by this query's search (both sides)
        stamps = g["graph"].node_u16[:, ST0:ST1 + 1]    # forward, backward stamps
        expanded.append(int(np.count_nonzero(stamps == 2 * g["qid"][0] + 1)))
    for p, c, a, b in zip(mine, ref, A, B):
        S, T = m.locate(np.stack([a, b]))
        if S == T:
            continue
        assert (not p.found and not np.isfinite(c)) or abs(p.cost - c) <= 1e-9 * c, (p.cost, c)
    med, med_nx = np.median(t_mine), np.median(t_ref)
    print(f"path (median per query, {len(A)} queries x {rounds} rounds): regn {med * 1e3:.3f} ms (mean "
          f"{np.mean(t_mine) * 1e3:.3f}) without smoothing; networkx.astar_path "
          f"{med_nx * 1e3:.3f} ms (mean {np.mean(t_ref) * 1e3:.3f}); ratio of medians "
          f"{med_nx / med:.1f}x, of means {np.mean(t_ref) / np.mean(t_mine):.1f}x over {rounds} "
          f"rounds (ratio of medians per round: {', '.join(f'{x:.1f}x' for x in ratios)}); "
          f"costs equal on all {len(A)}")
    print(f"path with smoothing (the default call): regn {np.median(t_smooth) * 1e3:.3f} ms "
          f"(mean {np.mean(t_smooth) * 1e3:.3f}); ratio of medians {med_nx / np.median(t_smooth):.1f}x "
          f"(per round: {', '.join(f'{x:.1f}x' for x in ratios_smooth)})")
    found = [(p, a, b) for p, a, b in zip(mine, A, B) if p.found and len(p.portals)]
    print(f"path search work (median over {len(found)} searched): "
          f"{np.median([len(p.portals) for p, _, _ in found]):.0f} portals per corridor, "
          f"{np.median([e for e, p in zip(expanded, mine) if p.found and len(p.portals)]):.0f} "
          f"faces expanded, graph cost / straight line "
          f"{np.median([p.cost / np.linalg.norm(b - a) for p, a, b in found]):.2f}")

    # scaling
    for n, dl in ((150, [(8, 8, 8)]), (1300, [(6, 6, 6)]),
                  (4400, [(5, 5, 5), (4, 4, 4), (3, 3, 3)])):
        mm = None
        for dims in dl:
            try:
                mm, pp = make(n, dims=dims)
                break
            except regn.errors.LimitError as e:
                print(f"scaling n={n} dims={dims}: {e}")
        if mm is None:
            continue
        qq = rng.uniform(-L, L, (200_000, 3))
        mm.locate(qq[:5])
        tl, _ = timeit(lambda: mm.locate(qq))
        DD = Delaunay(pp)
        tf, _ = timeit(lambda: DD.find_simplex(qq))
        AA, BB = mm.random_points(50, seed=1), mm.random_points(50, seed=2)
        mm.find_path(AA[0], BB[0])
        tq = []
        for x, y in zip(AA, BB):
            t0 = time.perf_counter()
            mm.find_path(x, y, smooth=False)
            tq.append(time.perf_counter() - t0)
        tp = float(np.median(tq))
        print(f"scaling: {mm.n_tets:6d} tets {mm.n_faces:6d} faces dims {dims}: locate 200k {tl:.3f} s "
              f"(find_simplex {tf:.3f} s), path {tp * 1e3:.3f} ms/query (median)")

    tracemalloc.start()
    m.locate(q)
    cur, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"peak traced memory during locate of {nloc} pts: {peak / 2**20:.1f} MiB; "
          f"process max RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    sys.exit(main())
