"""Benchmark the navigation queries against the libraries a user would pick
instead (not part of the tests).

    pip install -e '.[bench]'
    python benchmarks/bench_query.py [--quick]

Maps: a ~15 000-tet Delaunay map (Delaunay of ~2 300 points in a +-50 000
box with holes; the format's u16 reference limit forces a 6x6x6 grid at that
size) and the demo asteroid field ``regn demo`` writes. Side by side in one
process, interleaved rounds (:mod:`compare`), answers compared:

* locate, 1 M uniform points: VTK's ``vtkCellTreeLocator`` and
  ``vtkStaticCellLocator`` through ``vtkProbeFilter`` (VTK's threads on every
  core), a cKDTree of tetrahedron centroids with a barycentric test of the
  nearest candidates, and on the Delaunay map scipy's ``find_simplex``;
* one-point locate: VTK ``FindCell``, scipy ``find_simplex`` of one point;
* find_path (unsmoothed), 200 queries: rustworkx A* and Dijkstra, igraph A*,
  networkx A*, on the same portal graph with the same costs (start and goal
  joined to their tetrahedra's portal faces at straight-line distance), the
  end tetrahedra found for them outside the timing;

then the default smoothed call, the search's work, scaling and memory.
:mod:`compare_all` runs these rows with the other benches' in one table.

Measured (``compare_all.py --quick --demo``, 200 000 points, three runs on
the 2-core VM, medians of the rounds): locate 23-26x VTK's
vtkCellTreeLocator and 31-35x its vtkStaticCellLocator on the demo map
(regn 8-12 ms, VTK 0.23-0.37 s on both cores), 25-27x and 31-35x on the
Delaunay map (13x-17x before the fine lists kept only the tetrahedra that
may hold a point of their cell). One point a call, both given the same
Python list: regn 1.6-2.4 us, FindCell 1.3-3.4 us (0.8-1.6x).
"""

import argparse
import math
import os
import resource
import sys
import time
import tracemalloc

import numpy as np
from scipy.spatial import Delaunay, cKDTree

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import Row, Side, count, peak_memory, print_table, side_by_side  # noqa: E402

import regn  # noqa: E402
from regn.format.layout import PORTAL_PAIRS  # noqa: E402

L = 50_000.0
COMMAND = "python benchmarks/bench_query.py"


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


def demo_map(seed=1):
    """The map ``regn demo`` writes (the same field, seed and grid)."""
    from regn.builder.generate import DEMO_DIMS, demo_field, generate
    return generate(*demo_field(seed=seed), dims=DEMO_DIMS, seed=seed, coverage_samples=0)


def two_maps():
    """The segment and wall benches' maps: [(name, mesh)] for this file's
    Delaunay map (few large walls) and the demo asteroid field (thousands of
    small ones)."""
    return [("Delaunay map of bench_query.py", make(2300)[0]),
            ("demo asteroid field (regn demo)", demo_map())]


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


# --- locate: the alternatives ------------------------------------------------

def vtk_grid(m):
    """The mesh's tetrahedra as a ``vtkUnstructuredGrid`` (cell i is
    tetrahedron i), with a cell array ``tet`` of the indices so that a probe
    reports the tetrahedron it found."""
    import vtk
    from vtk.util.numpy_support import numpy_to_vtk, numpy_to_vtkIdTypeArray
    grid = vtk.vtkUnstructuredGrid()
    points = vtk.vtkPoints()
    points.SetData(numpy_to_vtk(np.ascontiguousarray(m.vertices), deep=True))
    grid.SetPoints(points)
    cells = vtk.vtkCellArray()
    cells.SetData(numpy_to_vtkIdTypeArray(np.arange(0, 4 * m.n_tets + 1, 4), deep=True),
                  numpy_to_vtkIdTypeArray(np.ascontiguousarray(m.tets).ravel(), deep=True))
    grid.SetCells(vtk.VTK_TETRA, cells)
    ids = numpy_to_vtk(np.arange(m.n_tets, dtype=np.int64), deep=True)
    ids.SetName("tet")
    grid.GetCellData().AddArray(ids)
    return grid


def vtk_all_cores():
    """VTK's threaded back end on every core (the wheel's default is one thread)."""
    import vtk
    vtk.vtkSMPTools.SetBackend("STDThread")
    vtk.vtkSMPTools.Initialize(0)
    return vtk.vtkSMPTools.GetEstimatedNumberOfThreads()


def vtk_probe(grid, locator):
    """points -> tetrahedron (-1 outside) through ``vtkProbeFilter`` with a
    locator of class ``locator``; tolerance 0, the question regn answers (VTK's
    own default adds a tolerance scaled to the cells, and then also takes
    points just outside a tetrahedron as inside it)."""
    import vtk
    from vtk.util.numpy_support import numpy_to_vtk, vtk_to_numpy

    def run(q):
        cloud = vtk.vtkPolyData()
        points = vtk.vtkPoints()
        points.SetData(numpy_to_vtk(q, deep=False))
        cloud.SetPoints(points)
        probe = vtk.vtkProbeFilter()
        probe.SetInputData(cloud)
        probe.SetSourceData(grid)
        if hasattr(probe, "SetCellLocator"):           # VTK 9.7 on
            probe.SetCellLocator(locator())
        else:
            probe.SetCellLocatorPrototype(locator())
        probe.PassCellArraysOff()
        probe.ComputeToleranceOff()
        probe.SetTolerance(0.0)
        probe.Update()
        out = probe.GetOutput().GetPointData()
        tet = vtk_to_numpy(out.GetArray("tet")).astype(np.int64)
        valid = vtk_to_numpy(out.GetArray(probe.GetValidPointMaskArrayName()))
        return np.where(valid != 0, tet, -1)
    return run


def vtk_locator(grid, locator):
    """A built VTK cell locator of class ``locator`` over ``grid``."""
    loc = locator()
    loc.SetDataSet(grid)
    loc.BuildLocator()
    return loc


def kdtree_locate(m, k=8):
    """points -> tetrahedron the way a scipy user might: a cKDTree of the
    tetrahedra's centroids gives ``k`` candidates, a barycentric test picks
    the first that holds the point (-1 when none does: a miss when the
    holding tetrahedron's centroid is not among the ``k`` nearest)."""
    p = np.asarray(m.tet_points)
    tree = cKDTree(p.mean(axis=1))
    inv = np.linalg.inv(np.transpose(p[:, 1:] - p[:, :1], (0, 2, 1)))      # (T,3,3)
    origin = p[:, 0]

    def run(q, chunk=65536):
        out = np.full(len(q), -1, dtype=np.int64)
        for s in range(0, len(q), chunk):
            x = q[s:s + chunk]
            cand = tree.query(x, k=k)[1]                                   # (n,k)
            lam = np.einsum("nkij,nkj->nki", inv[cand], x[:, None] - origin[cand])
            inside = (lam.min(axis=2) >= 0) & (lam.sum(axis=2) <= 1)
            hit = inside.any(axis=1)
            out[s:s + chunk][hit] = cand[hit, inside[hit].argmax(axis=1)]
        return out
    return run


def scipy_locate(m, pts):
    """points -> tetrahedron through ``Delaunay(pts).find_simplex``, for a map
    built from Delaunay(pts) minus some tetrahedra: a simplex the map does not
    hold answers -1. -> (run, delaunay)."""
    d = Delaunay(pts)
    # the map stores the points as float32, in the same order
    assert np.allclose(m.vertices, pts, rtol=1e-6, atol=0)
    key = {tuple(t): i for i, t in enumerate(np.sort(m.tets, axis=1).tolist())}
    to_map = np.array([key.get(tuple(t), -1) for t in np.sort(d.simplices, axis=1).tolist()]
                      + [-1])                                # find_simplex's -1 -> -1

    def run(q):
        return to_map[d.find_simplex(q)]
    return run, d


def holds(m, tets, q):
    """Smallest barycentric coordinate of each point in its tetrahedron."""
    p = np.asarray(m.tet_points)[tets]
    lam = np.linalg.solve(np.transpose(p[:, 1:] - p[:, :1], (0, 2, 1)),
                          (q - p[:, 0])[..., None])[..., 0]
    return np.minimum(lam.min(axis=1), 1 - lam.sum(axis=1))


def explain_locate(m, mine, theirs, q):
    """A note on the points two locates answer differently: the smallest
    barycentric coordinate of each point in the tetrahedron each side
    returned (negative: the point lies outside it), and the -1 answers."""
    diff = np.flatnonzero(mine != theirs)
    if not len(diff):
        return ""
    worst, outside = [], []
    for who, ans in (("regn", mine), ("alternative", theirs)):
        found = diff[ans[diff] >= 0]
        if len(found):
            worst.append(f"{who} >= {holds(m, ans[found], q[found]).min():.2g}")
        outside.append(f"{who} {len(diff) - len(found)}")
    return (f"{len(diff)} points differ. Smallest barycentric coordinate of such a point "
            f"in the tetrahedron returned: {', '.join(worst)}; answered -1 (outside): "
            f"{', '.join(outside)}")


def locate_rows(m, name, n, rounds=3, pts=None, quick=False):
    """Batch locate of ``n`` uniform points in the map's box: regn against
    each alternative. ``pts``: the map's Delaunay points, for find_simplex."""
    import vtk
    q = np.random.default_rng(1).uniform(m.bbox_min, m.bbox_max, (n, 3))
    threads = vtk_all_cores()
    grid = vtk_grid(m)
    alts = [(f"VTK vtkCellTreeLocator via vtkProbeFilter ({threads} threads)",
             vtk_probe(grid, vtk.vtkCellTreeLocator), 20.0),
            (f"VTK vtkStaticCellLocator via vtkProbeFilter ({threads} threads)",
             vtk_probe(grid, vtk.vtkStaticCellLocator), 20.0),
            ("cKDTree of centroids, 8 candidates, barycentric test", kdtree_locate(m), None)]
    if pts is not None:
        alts.append(("scipy Delaunay.find_simplex", scipy_locate(m, pts)[0], None))
    rows = []
    for label, run, goal in alts:
        mine, theirs = Side(lambda: m.locate(q)), Side(lambda: run(q))
        side_by_side(mine, theirs, rounds)
        rows.append(Row(f"locate, {count(n)} points", name, label, mine.times,
                        theirs.times, int(np.sum(mine.answer == theirs.answer)), n,
                        peak_memory(mine.run), peak_memory(theirs.run), goal, COMMAND,
                        explain_locate(m, mine.answer, theirs.answer, q),
                        cores=(mine.cores, theirs.cores)))
    return rows


def single_locate_rows(m, name, calls=2000, rounds=3, pts=None):
    """One point per call: regn's ``locate`` of a list of three floats (its
    single-point entry, docs/queries.md "One point") against VTK's
    ``FindCell`` given the same list (a locator already built) and scipy's
    find_simplex of a (1,3) array (what it takes)."""
    import vtk
    q = np.random.default_rng(2).uniform(m.bbox_min, m.bbox_max, (calls, 3))
    ones = [q[i:i + 1] for i in range(calls)]
    xs = q.tolist()
    grid = vtk_grid(m)
    alts = []
    for cls in (vtk.vtkCellTreeLocator, vtk.vtkStaticCellLocator):
        loc = vtk_locator(grid, cls)
        alts.append((f"VTK {cls.__name__}.FindCell", [lambda x=x, f=loc.FindCell: f(x)
                                                      for x in xs]))
    if pts is not None:
        run = scipy_locate(m, pts)[0]
        alts.append(("scipy Delaunay.find_simplex, one point",
                     [lambda p=p: run(p)[0] for p in ones]))
    rows = []
    for label, calls_alt in alts:
        mine = Side(None, [lambda x=x: m.locate(x)[0] for x in xs])
        theirs = Side(None, calls_alt)
        side_by_side(mine, theirs, rounds)
        a, b = np.array(mine.answer), np.array(theirs.answer)
        rows.append(Row("locate, one point a call (median)", name, label, mine.times,
                        theirs.times, int(np.sum(a == b)), len(a), per_call=True,
                        command=COMMAND, note=explain_locate(m, a, b, q)))
    return rows


# --- find_path: the alternatives -----------------------------------------------

def portal_graph(m):
    """The face graph find_path searches, as plain arrays: (face i, face j,
    cost) for each pair of portal faces of one tetrahedron with a passable
    cost (finite, >= 0), and the face centroids."""
    tf, nb, pc = m.tet_faces, m.neighbors, m.portal_costs[:, :, 0]
    fi, fj, w = [], [], []
    for p, (i, j) in enumerate(PORTAL_PAIRS):
        keep = (nb[:, i] >= 0) & (nb[:, j] >= 0) & (tf[:, i] != tf[:, j]) \
            & np.isfinite(pc[:, p]) & (pc[:, p] >= 0)
        fi.append(tf[keep, i])
        fj.append(tf[keep, j])
        w.append(pc[keep, p])
    return (np.concatenate(fi), np.concatenate(fj), np.concatenate(w).astype(np.float64),
            np.asarray(m.face_centroids, dtype=np.float64))


def end_links(m, a, b):
    """[(face, distance)] joining start ``a`` and goal ``b`` to the portal
    faces of their tetrahedra (found here, outside any timing), or None when
    both lie in one tetrahedron (regn then answers the straight line)."""
    S, T = m.locate(np.stack([a, b]))
    if S == T or S < 0 or T < 0:
        return None
    cen = m.face_centroids
    links = []
    for t, x in ((S, a), (T, b)):
        links.append([(int(f), float(np.linalg.norm(cen[f] - x)))
                      for f, nbr in zip(m.tet_faces[t], m.neighbors[t]) if nbr >= 0])
    return links


class RustworkxPaths:
    """find_path with rustworkx: faces are nodes 0..F-1; each query adds a
    start and a goal node, links them, searches and removes them."""

    def __init__(self, m):
        import rustworkx as rx
        self.rx = rx
        fi, fj, w, cen = portal_graph(m)
        self.g = rx.PyGraph(multigraph=False)
        self.g.add_nodes_from(range(m.n_faces))
        self.g.add_edges_from(list(zip(fi.tolist(), fj.tolist(), w.tolist())))
        self.cen = [tuple(c) for c in cen.tolist()]

    def _linked(self, links, search):
        g = self.g
        s, t = g.add_node(-1), g.add_node(-2)
        g.add_edges_from([(s, f, d) for f, d in links[0]] + [(f, t, d) for f, d in links[1]])
        try:
            return search(s, t)
        finally:
            g.remove_node(s)
            g.remove_node(t)

    def _cost(self, nodes):
        return sum(self.g.get_edge_data(u, v) for u, v in zip(nodes[:-1], nodes[1:]))

    def astar(self, links, goal):
        cen, dist = self.cen, math.dist

        def bound(face):
            return dist(cen[face], goal) if face >= 0 else 0.0

        def search(s, t):
            try:
                nodes = self.rx.graph_astar_shortest_path(self.g, s, lambda f: f == -2,
                                                          float, bound)
            except self.rx.NoPathFound:
                return math.inf
            return self._cost(list(nodes))
        return self._linked(links, search)

    def dijkstra(self, links, goal):
        def search(s, t):
            paths = self.rx.dijkstra_shortest_paths(self.g, s, target=t, weight_fn=float)
            return self._cost(list(paths[t])) if t in paths else math.inf
        return self._linked(links, search)


class IgraphPaths:
    """find_path with igraph: faces are vertices 0..F-1, start and goal two
    more; each query adds their links as edges, searches and deletes them
    (A* if this igraph has it, else Dijkstra)."""

    def __init__(self, m):
        import igraph
        fi, fj, w, cen = portal_graph(m)
        self.F = m.n_faces
        self.g = igraph.Graph(n=self.F + 2, edges=np.stack([fi, fj], axis=1).tolist())
        self.g.es["weight"] = w.tolist()
        self.cen = [tuple(c) for c in cen.tolist()]
        self.has_astar = hasattr(self.g, "get_shortest_path_astar")

    def query(self, links, goal):
        g, F, cen, dist = self.g, self.F, self.cen, math.dist
        first = g.ecount()
        g.add_edges([(F, f) for f, _ in links[0]] + [(f, F + 1) for f, _ in links[1]],
                    attributes={"weight": [d for _, d in links[0] + links[1]]})
        try:
            if self.has_astar:
                edges = g.get_shortest_path_astar(
                    F, F + 1, lambda _, v, __: dist(cen[v], goal) if v < F else 0.0,
                    weights="weight", output="epath")
            else:
                edges = g.get_shortest_path(F, F + 1, weights="weight", output="epath")
            return sum(g.es[edges]["weight"]) if edges else math.inf
        finally:
            g.delete_edges(range(first, g.ecount()))


class NetworkxPaths:
    """find_path with networkx.astar_path, linking start and goal the same way."""

    def __init__(self, m):
        import networkx as nx
        self.nx = nx
        fi, fj, w, cen = portal_graph(m)
        self.g = nx.Graph()
        self.g.add_weighted_edges_from(zip(fi.tolist(), fj.tolist(), w.tolist()))
        self.cen = [tuple(c) for c in cen.tolist()]

    def query(self, links, goal):
        nx, g, cen, dist = self.nx, self.g, self.cen, math.dist
        g.add_weighted_edges_from([("s", f, d) for f, d in links[0]]
                                  + [(f, "g", d) for f, d in links[1]])

        def bound(u, v):
            return 0.0 if isinstance(u, str) else dist(cen[u], goal)
        try:
            return nx.astar_path_length(g, "s", "g", heuristic=bound, weight="weight")
        except nx.NetworkXNoPath:
            return math.inf
        finally:
            g.remove_nodes_from(["s", "g"])


def path_queries(m, n):
    """``n`` (start, goal, links) with start and goal in different tetrahedra."""
    out, seed = [], 2
    while len(out) < n:
        A, B = m.random_points(n, seed=seed), m.random_points(n, seed=seed + 1)
        seed += 2
        out += [(a, b, lk) for a, b in zip(A, B)
                if (lk := end_links(m, a, b)) is not None]
    return out[:n]


def same_cost(x, y):
    return (math.isinf(x) and math.isinf(y)) or abs(x - y) <= 1e-9 * max(abs(x), 1.0)


def path_rows(m, name, n=200, rounds=3, networkx=True):
    """Unsmoothed find_path, median per query, against each graph library."""
    queries = path_queries(m, n)
    rw, ig = RustworkxPaths(m), IgraphPaths(m)
    alts = [("rustworkx A* (graph_astar_shortest_path)", rw.astar, 30.0),
            ("rustworkx Dijkstra (dijkstra_shortest_paths)", rw.dijkstra, None),
            ("igraph " + ("A* (get_shortest_path_astar)" if ig.has_astar
                          else "Dijkstra (get_shortest_path)"), ig.query, None)]
    if networkx:
        alts.append(("networkx astar_path_length", NetworkxPaths(m).query, None))
    rows = []
    for label, query, goal in alts:
        mine = Side(None, [lambda a=a, b=b: m.find_path(a, b, smooth=False).cost
                           for a, b, _ in queries])
        theirs = Side(None, [lambda b=b, lk=lk: query(lk, tuple(b)) for _, b, lk in queries])
        side_by_side(mine, theirs, rounds)
        agree = sum(same_cost(x, y) for x, y in zip(mine.answer, theirs.answer))
        rows.append(Row(f"find_path unsmoothed, {n} queries (median)", name, label,
                        mine.times, theirs.times, agree, n, goal=goal, per_call=True,
                        command=COMMAND))
    return rows


def comparison_rows(maps, quick=False, rounds=3):
    """Every comparison of this bench on ``maps`` ([(name, mesh, its Delaunay
    points or None)]), as :class:`compare.Row`."""
    n_loc = 200_000 if quick else 1_000_000
    n_path = 50 if quick else 200
    rows = []
    for name, m, pts in maps:
        rows += locate_rows(m, name, n_loc, rounds, pts)
        rows += single_locate_rows(m, name, 500 if quick else 2000, rounds, pts)
        rows += path_rows(m, name, n_path, rounds)
    return rows


def faces_settled(m):
    """How many faces the mesh's last search settled (both sides; the
    first search slot's stamps, so single-threaded use only)."""
    from regn.query.paths._path_kernels import ST0, ST1
    from regn.query.paths.path import _graph
    g = _graph(m)
    stamps = g["graph"].node_u16[:, ST0:ST1 + 1]
    return int(np.count_nonzero(stamps == 2 * g["qid"][0] + 1))


def path_details(m, n=200):
    """The default (smoothed) call against the unsmoothed one, and the
    search's work, on ``n`` queries, with the landmark table and, on a copy
    of the mesh that never gets one, without."""
    from regn.query.paths.path import _graph, ensure_landmarks
    queries = path_queries(m, n)
    ensure_landmarks(_graph(m))                    # (as after the mesh's first searches)
    m.find_path(queries[0][0], queries[0][1])                  # the smoother's kernel too
    t_raw, t_smooth, expanded, found = [], [], [], []
    for a, b, _ in queries:
        t0 = time.perf_counter()
        p = m.find_path(a, b, smooth=False)
        t_raw.append(time.perf_counter() - t0)
        expanded.append(faces_settled(m))
        if p.found:
            found.append((p, a, b))
        t0 = time.perf_counter()
        m.find_path(a, b)
        t_smooth.append(time.perf_counter() - t0)
    print(f"path with smoothing (the default call): median {np.median(t_smooth) * 1e3:.3f} ms "
          f"a query, {np.median(t_smooth) / np.median(t_raw):.1f}x the unsmoothed "
          f"{np.median(t_raw) * 1e3:.3f} ms")
    print(f"path search work (median over {len(found)} found): "
          f"{np.median([len(p.portals) for p, _, _ in found]):.0f} portals per corridor, "
          f"{np.median(expanded):.0f} faces settled, graph cost / straight line "
          f"{np.median([p.cost / np.linalg.norm(b - a) for p, a, b in found]):.2f}")
    bare = regn.loads(m.dumps())
    _graph(bare)["marks_done"] = True              # never build the landmark table
    without = []
    for a, b, _ in queries:
        bare.find_path(a, b, smooth=False)
        without.append(faces_settled(bare))
    print(f"faces settled without the landmark table (Euclidean bound alone): median "
          f"{np.median(without):.0f}")


def scaling(rng):
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
        print(f"scaling: {mm.n_tets:6d} tets {mm.n_faces:6d} faces dims {dims}: locate 200k "
              f"{tl:.3f} s (find_simplex {tf:.3f} s), path {tp * 1e3:.3f} ms/query (median)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    m, pts = make(2300)
    print(f"Delaunay map: {m.n_tets} tets, {m.n_faces} faces, {m.n_refs} refs, dims {m.dims}")
    demo = demo_map()
    print(f"demo map: {demo.n_tets} tets, {demo.n_faces} faces, {demo.n_refs} refs")
    t0 = time.perf_counter()
    m.locate(np.zeros((1, 3)))
    print(f"locate one-off setup (fine grid + numba load): {time.perf_counter() - t0:.2f} s")
    rows = comparison_rows([("Delaunay", m, pts), ("demo", demo, None)], args.quick,
                           args.rounds)
    print()
    print_table(rows)
    print()
    for name, mesh in (("Delaunay", m), ("demo", demo)):
        print(f"{name} map:")
        path_details(mesh, 50 if args.quick else 200)
    scaling(np.random.default_rng(1))
    q = np.random.default_rng(1).uniform(-L, L, (200_000 if args.quick else 1_000_000, 3))
    tracemalloc.start()
    m.locate(q)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(f"peak traced memory during locate of {len(q)} pts: {peak / 2**20:.1f} MiB; "
          f"process max RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    sys.exit(main())
