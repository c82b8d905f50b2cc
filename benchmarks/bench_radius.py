"""Paths for agents with a radius (issue 16): what they cost and how short
they are (not part of the tests).

    python benchmarks/bench_radius.py [--quick] [--map demo.rgn]

1. The clearance precompute on the demo map (the map ``regn demo`` builds):
   portal witnesses and clearances (once per mesh), and what the first
   query of each radius adds (the edges it settles, the walls near each
   tetrahedron).
2. A radius query against the default one, 200 random queries between
   points with room for the largest radius, medians of process CPU time,
   both run in turn in the same rounds.
3. The length of radius paths against an independent reference: a graph of
   free sample points (random_points with the radius), each joined to its
   nearest neighbours when the swept sphere between them is clear
   (line_of_sight with the radius), the start and goal added the same way,
   the shortest path by scipy's Dijkstra, then shortened greedily (from
   each point, jump to the farthest later point in clear view). The
   reference is a valid path for the radius, so it is an upper bound of
   the true shortest; a negative gap means ours is shorter.
"""

import argparse
import time

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import dijkstra
from scipy.spatial import cKDTree

from regn.builder.generate import DEMO_DIMS, demo_field, generate
from regn.query.common import scratch


def demo_map():
    return generate(*demo_field(), dims=DEMO_DIMS, seed=1, coverage_samples=0)


def holes_map(seed=1):
    """A Delaunay map of random points with five round holes (as the tests')."""
    import regn
    from scipy.spatial import Delaunay
    rng = np.random.default_rng(seed)
    h = 50_000.0
    pts = np.vstack([[[x, y, z] for x in (-h, h) for y in (-h, h) for z in (-h, h)],
                     rng.uniform(-h, h, (400, 3))])
    tets = Delaunay(pts).simplices
    cen = pts[tets].mean(axis=1)
    keep = np.ones(len(tets), bool)
    for c in rng.uniform(-0.5 * h, 0.5 * h, (5, 3)):
        keep &= np.linalg.norm(cen - c, axis=1) > 0.18 * h
    return regn.build(pts, tets[keep], bbox=((-h,) * 3, (h,) * 3), dims=(6, 6, 6))


def precompute(mesh, radii):
    from regn.query.radius.portals import margin_radius, portal_clearance, radius_graph
    mesh.find_path(mesh.random_points(1, seed=0)[0], mesh.random_points(1, seed=1)[0])
    mesh.distance_to_wall(np.zeros((1, 3)))           # graph and wall BVH built
    portal_clearance(mesh)                            # (compiled kernels loaded)
    scratch(mesh).pop("portal_clearance")
    t0, c0 = time.perf_counter(), time.process_time()
    pc = portal_clearance(mesh)
    print(f"  portal clearance: {time.perf_counter() - t0:.3f} s wall, "
          f"{time.process_time() - c0:.3f} s CPU over all threads "
          f"({int((pc.clearance >= 0).sum())} portals)")
    for r in radii:
        t0 = time.perf_counter()
        radius_graph(mesh, margin_radius(mesh, r))
        print(f"  first query at radius {r:g} m adds {time.perf_counter() - t0:.3f} s "
              "(edges settled, walls near each tetrahedron)")


def query_cost(mesh, radii, n=200, rounds=3):
    """Both ends drawn with room for the largest radius, so that every radius
    query searches and smooths (an end too close to a wall would be
    answered at once, and flatter the ratio)."""
    room = max(radii)
    A = mesh.random_points(n, seed=21, radius=room)
    B = mesh.random_points(n, seed=22, radius=room)
    for r in radii:
        mesh.find_path(A[0], B[0], radius=r)
    mesh.find_path(A[0], B[0])
    for rnd in range(rounds):
        times = {r: [] for r in (0.0,) + tuple(radii)}
        found = {r: 0 for r in times}
        for a, b in zip(A, B):
            for r in times:
                t0 = time.process_time()
                found[r] += mesh.find_path(a, b, radius=r).found
                times[r].append(time.process_time() - t0)
        base = np.median(times[0.0])
        line = ", ".join(f"radius {r:g} m {np.median(times[r]) * 1e3:.3f} ms "
                         f"({np.median(times[r]) / base:.2f}x, {found[r]} found)"
                         for r in radii)
        print(f"  round {rnd + 1}: default {base * 1e3:.3f} ms ({found[0.0]} found); {line}")


def _clear(mesh, a, b, r):
    return mesh.line_of_sight(a, b, radius=r)


def reference_graph(mesh, r, n_samples, k):
    """Free samples and their clear k-nearest edges (a sparse matrix)."""
    P = mesh.random_points(n_samples, seed=31, radius=r)
    d, j = cKDTree(P).query(P, k=k + 1)
    i = np.repeat(np.arange(len(P)), k)
    j, d = j[:, 1:].ravel(), d[:, 1:].ravel()
    ok = _clear(mesh, P[i], P[j], r)
    return P, i[ok], j[ok], d[ok]


def reference_length(mesh, r, graph, a, b, k):
    """The reference path's length from a to b (inf when none)."""
    P, i, j, d = graph
    n = len(P)
    tree = cKDTree(P)
    rows, cols, w = [i], [j], [d]
    for node, x in ((n, a), (n + 1, b)):
        dd, nb = tree.query(x, k=k)
        ok = _clear(mesh, np.repeat(x[None], k, 0), P[nb], r)
        rows.append(np.full(ok.sum(), node))
        cols.append(nb[ok])
        w.append(dd[ok])
    M = coo_matrix((np.concatenate(w) + 1e-9, (np.concatenate(rows), np.concatenate(cols))),
                   shape=(n + 2, n + 2)).tocsr()
    M = M.maximum(M.T)
    dist, pred = dijkstra(M, indices=n, return_predecessors=True)
    if not np.isfinite(dist[n + 1]):
        return np.inf
    nodes = [n + 1]
    while nodes[-1] != n:
        nodes.append(pred[nodes[-1]])
    Q = np.vstack([P, a, b])[nodes[::-1]]
    return _shortcut_length(mesh, Q, r)


def _shortcut_length(mesh, Q, r):
    """Length of the polyline Q shortened greedily: from each point, straight
    to the farthest later point in clear view."""
    total, at = 0.0, 0
    while at < len(Q) - 1:
        later = np.arange(len(Q) - 1, at, -1)
        ok = _clear(mesh, np.repeat(Q[at][None], len(later), 0), Q[later], r)
        nxt = int(later[np.argmax(ok)]) if ok.any() else at + 1
        total += float(np.linalg.norm(Q[nxt] - Q[at]))
        at = nxt
    return total


def length_gap(name, mesh, radii, n_queries, n_samples, k=16):
    for r in radii:
        t0 = time.perf_counter()
        graph = reference_graph(mesh, r, n_samples, k)
        A = mesh.random_points(n_queries, seed=41, radius=r)
        B = mesh.random_points(n_queries, seed=42, radius=r)
        gaps, ours_only, ref_only = [], 0, 0
        for a, b in zip(A, B):
            p = mesh.find_path(a, b, radius=r)
            ref = reference_length(mesh, r, graph, a, b, k)
            if p.found and np.isfinite(ref):
                gaps.append(p.length / ref - 1.0)
            ours_only += p.found and not np.isfinite(ref)
            ref_only += (not p.found) and np.isfinite(ref)
        g = np.array(gaps)
        print(f"  {name}, radius {r:g} m: {len(g)} pairs; length / reference - 1: median "
              f"{np.median(g):+.2%}, 90th percentile {np.quantile(g, 0.9):+.2%}, "
              f"max {g.max():+.2%}; ours shorter in {np.mean(g < 0):.0%}; "
              f"found only by ours {ours_only}, only by the reference {ref_only} "
              f"({n_samples} samples, {len(graph[1])} clear edges; "
              f"{time.perf_counter() - t0:.0f} s)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer queries and samples")
    ap.add_argument("--map", metavar="FILE",
                    help="a REGN file in place of the generated demo map (such as the "
                         "demo.rgn of `regn demo`)")
    args = ap.parse_args()
    if args.map:
        import regn
        demo = regn.load(args.map)
    else:
        demo = demo_map()
    print(f"demo map{' ' + args.map if args.map else ''}: {demo.n_tets} tetrahedra, "
          f"{len(demo.boundary_faces)} walls")
    print("1. clearance precompute")
    precompute(demo, (200.0, 1000.0))
    print("2. query cost (process CPU, medians of 200 queries)")
    query_cost(demo, (200.0, 1000.0), rounds=1 if args.quick else 3)
    print("3. length against the reference")
    n_q, n_s = (20, 10_000) if args.quick else (100, 40_000)
    # 1 m: next to nothing on these maps, so the gap of the search's corridor
    # choice itself, which the wider radii inherit
    length_gap("demo map", demo, (1.0, 200.0, 1000.0), n_q, n_s)
    length_gap("Delaunay map with round holes", holes_map(), (1.0, 500.0, 2000.0), n_q, n_s)


if __name__ == "__main__":
    main()
