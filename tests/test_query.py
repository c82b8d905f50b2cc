"""Navigation queries: locate, nearest, path, raycast, sampling (issue 3)."""

import json

import numpy as np
import pytest
from scipy.spatial import Delaunay

import regn
import regn.query.locating.locate
import regn.query.paths.smooth
from regn.errors import QueryError

from conftest import sphere_holes_map

L = 50_000.0


def _make(n=260, seed=0, holes=4, dims=(6, 6, 6)):
    return sphere_holes_map(n, seed, holes, dims, L)


@pytest.fixture(scope="module")
def mesh():
    return _make()[0]


def brute_locate(mesh, pts, tol=1e-9):
    """Smallest tet index whose barycentric coords are all >= -tol (np.linalg.solve).
    Each point solves the tetrahedra whose bounding box, grown by a millionth
    of its size, holds it: coordinates >= -tol put a point at most 4 tol of
    the size outside the box, so every tetrahedron that can answer is solved."""
    P = mesh.tet_points
    A = np.transpose(P[:, 1:] - P[:, :1], (0, 2, 1))
    lo, hi = P.min(axis=1), P.max(axis=1)
    pad = 1e-6 * (hi - lo).max(axis=1, keepdims=True)
    lo, hi = lo - pad, hi + pad
    out = np.full(len(pts), -1)
    for i, p in enumerate(pts):
        if not np.all(np.isfinite(p)):
            continue
        near = np.flatnonzero(np.all((lo <= p) & (p <= hi), axis=1))
        l = np.linalg.solve(A[near], (p - P[near, 0])[:, :, None])[:, :, 0]
        b = np.concatenate([1 - l.sum(1, keepdims=True), l], axis=1)
        hit = near[b.min(axis=1) >= -tol]
        out[i] = hit.min() if len(hit) else -1
    return out


def closest_on_triangles(p, tri):
    """Reference: (K,3) points, (K,3,3) triangles -> (K,3) closest points,
    as the nearer of the projection into the face (when it lands inside) and
    the clamped projections onto the three edges."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        P0, P1, P2 = tri[:, 0], tri[:, 1], tri[:, 2]
        e1, e2 = P1 - P0, P2 - P0
        r = p - P0
        d00, d01, d11 = (e1 * e1).sum(1), (e1 * e2).sum(1), (e2 * e2).sum(1)
        d20, d21 = (r * e1).sum(1), (r * e2).sum(1)
        den = d00 * d11 - d01 * d01
        v = (d11 * d20 - d01 * d21) / den
        w = (d00 * d21 - d01 * d20) / den
        inside = (den > 0) & (v >= 0) & (w >= 0) & (v + w <= 1)
        best = np.where(inside[:, None], P0 + v[:, None] * e1 + w[:, None] * e2, np.nan)
        bestd = np.where(inside, np.linalg.norm(best - p, axis=1), np.inf)
        for A, B in ((P0, P1), (P1, P2), (P2, P0)):
            e = B - A
            ee = (e * e).sum(1)
            t = np.where(ee > 0, np.clip(((p - A) * e).sum(1) / ee, 0, 1), 0)
            x = A + t[:, None] * e
            dx = np.linalg.norm(x - p, axis=1)
            m = dx < bestd
            best[m], bestd[m] = x[m], dx[m]
    return best


def adversarial(mesh, rng):
    V = mesh.vertices
    fv = V[mesh.face_vertices]
    tv = V[mesh.tets]
    edges = (tv[:, 0] + tv[:, 1]) / 2
    wall = rng.uniform(-L, L, (40, 3))
    wall[np.arange(40), rng.integers(0, 3, 40)] = rng.choice([-L, L], 40)
    return np.vstack([V[rng.choice(len(V), 40)], fv.mean(1)[rng.choice(len(fv), 60)],
                      edges[rng.choice(len(edges), 40)], wall,
                      [[2 * L, 0, 0], [0, 0, -1.5 * L]]])


@pytest.mark.parametrize("method", ["auto", "grid"])
def test_locate_matches_brute_force(mesh, method):
    rng = np.random.default_rng(1)
    pts = np.vstack([rng.uniform(-L, L, (300, 3)), adversarial(mesh, rng)])
    got = regn.query.locating.locate.locate(mesh, pts, method=method)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, brute_locate(mesh, pts))


def test_locate_holes_and_barycentric():
    m, holes = _make(seed=3)
    r = m.locate(holes)                      # hole centres are outside
    np.testing.assert_array_equal(r, brute_locate(m, holes))
    assert np.sum(r == -1) >= 2         # (a big tet may still cover one)
    pts = m.random_points(200, seed=2)
    t, bc = m.locate(pts, return_barycentric=True)
    assert np.all(t >= 0) and bc.shape == (200, 4)
    np.testing.assert_allclose(np.einsum("nk,nkd->nd", bc, m.tet_points[t]), pts, atol=1e-6)
    assert np.all(bc > -1e-9)


def test_locate_incomplete_cell_list():
    m, _ = _make(seed=4)
    indptr, indices = m.grid_csr
    rng = np.random.default_rng(0)
    keep = rng.random(len(indices)) < 0.4           # drop 60 % of the references
    counts = np.add.reduceat(keep, indptr[:-1]) * (np.diff(indptr) > 0)
    new_ptr = np.concatenate([[0], np.cumsum(counts)])
    m.__dict__["grid_csr"] = (new_ptr, indices[keep])    # a Mesh listing fewer tets
    pts = np.vstack([rng.uniform(-L, L, (300, 3)), adversarial(m, rng)])
    got = regn.query.locating.locate.locate(m, pts, method="grid")
    np.testing.assert_array_equal(got, brute_locate(m, pts))


def test_locate_grid_walk_blocked_by_a_hole():
    """Many holes and a cell list cut to a tenth: walks from the surviving
    candidates run into holes, and each such point must still be located."""
    m, _ = _make(n=700, seed=8, holes=14, dims=(3, 3, 3))
    indptr, indices = m.grid_csr
    rng = np.random.default_rng(1)
    keep = rng.random(len(indices)) < 0.1
    counts = np.add.reduceat(keep, indptr[:-1]) * (np.diff(indptr) > 0)
    m.__dict__["grid_csr"] = (np.concatenate([[0], np.cumsum(counts)]), indices[keep])
    pts = m.random_points(3000, seed=2)       # all inside the volume
    got = regn.query.locating.locate.locate(m, pts, method="grid")
    assert np.all(got >= 0)
    np.testing.assert_array_equal(got, brute_locate(m, pts))
    np.testing.assert_array_equal(got, m.locate(pts))


def _overlapping_maps():
    """Files the builder would not write: a tetrahedron flattened (its
    neighbours inverted), and an interior vertex moved a fifth of the box
    away (many tetrahedra overlapping deeply)."""
    from test_degenerate import _flattened
    from test_walls import _patched
    from conftest import random_map
    m = random_map(80, seed=6, hole_fraction=0.05, dims=(4, 4, 4))
    V = m.vertices
    v = int(np.flatnonzero(np.abs(V).max(axis=1) < 0.5 * L)[0])
    return [_flattened()[0], _patched(m, [(v, V[v] + 0.2 * L)])]


def _fine_probe_points(mesh, tables, rng):
    """Random points in the box and in its slack, and the places where
    tetrahedra tie or the fine grid's cells meet: vertices, face and edge
    points, points a hair off faces, cell corners."""
    lo, hi = np.asarray(mesh.bbox_min, float), np.asarray(mesh.bbox_max, float)
    P = mesh.tet_points.astype(np.float64)
    k = rng.choice(len(P), 300)
    w = rng.dirichlet(np.ones(3), 300)
    face = np.einsum("nk,nkd->nd", w, P[k, :3])
    normal = np.cross(P[k, 1] - P[k, 0], P[k, 2] - P[k, 0])
    with np.errstate(invalid="ignore", divide="ignore"):     # a flat tet's face: NaN
        normal /= np.linalg.norm(normal, axis=1, keepdims=True)
    off = face + normal * rng.choice([-1, 1], (300, 1)) * 1e-9 * L * rng.uniform(0, 2, (300, 1))
    frame, dims = tables.frame, tables.dims
    corners = frame[2] + frame[3] * rng.integers(0, dims + 1, (300, 3))
    slack = (tables.frame[1] - hi) * rng.uniform(0, 1, (300, 3))
    rim = np.where(rng.random((300, 3)) < 0.5, lo - slack, hi + slack)
    rim[:, :2] = rng.uniform(lo[:2], hi[:2], (300, 2))
    return np.vstack([rng.uniform(lo - 0.01 * (hi - lo), hi + 0.01 * (hi - lo), (2000, 3)),
                      P[k].reshape(-1, 3), face, off, 0.5 * (P[k, 0] + P[k, 3]),
                      corners, rim, adversarial(mesh, rng)])


def test_fine_lists_answer_as_the_bounding_box_lists(monkeypatch):
    """The fine lists leave out only tetrahedra that hold no point of the
    cell: on valid and overlapping maps, every point gets, bit for bit, the
    answer of the lists of every tetrahedron whose bounding box reaches the
    cell (the lists before that filter, same cells, same order), and the
    batch's answer is the single point's."""
    from regn.query.locating import _locate_kernels as K
    from regn.query.locating.locate import locate_tables
    from regn.builder.generate import demo_field, generate
    maps = [_make(seed=2)[0], generate(*demo_field(seed=5, n=10), dims=(6, 6, 6),
                                       coverage_samples=0)] + _overlapping_maps()
    rng = np.random.default_rng(12)
    real = K.fine_lists
    for m in maps:
        tables = locate_tables(m)
        twin = regn.loads(m.dumps())
        with monkeypatch.context() as mp:          # pad inf: the filter keeps every tet
            mp.setattr(K, "fine_lists", lambda *a: real(*a[:-1], np.full(3, np.inf)))
            full = locate_tables(twin)
        np.testing.assert_array_equal(full.dims, tables.dims)
        assert len(tables.cell_tets) < 0.8 * len(full.cell_tets)
        pts = _fine_probe_points(m, tables, rng)
        got = np.empty(len(pts), np.int64)
        want = np.empty(len(pts), np.int64)
        K.locate_points(tables, pts, got)
        K.locate_points(full, pts, want)
        np.testing.assert_array_equal(got, want)
        one = [regn.query.locating.locate.locate_one(m, *p) for p in pts[::7].tolist()]
        np.testing.assert_array_equal(one, got[::7])
        assert (got >= 0).sum() > len(pts) // 2


def test_may_hold_keeps_every_box_with_a_held_point():
    """may_hold (the fine lists' filter) is True for every box holding a
    point the tetrahedron holds: points just outside a face, within
    BARY_TOL, at the corner of a box that stretches away from the
    tetrahedron, on small tetrahedra near the origin and far from it (where
    rounding is largest); and False for a box far outside."""
    from regn.query.locating._locate_kernels import holds, may_hold
    from regn.tolerances import BARY_TOL
    rng = np.random.default_rng(8)
    for offset in (0.0, 3e4, 7e6):
        P = rng.normal(size=(400, 4, 3)) * rng.uniform(1e-2, 1e3, (400, 1, 1)) + offset
        A = np.transpose(P[:, 1:] - P[:, :1], (0, 2, 1))
        M = np.linalg.inv(A)
        W = np.concatenate([M, -np.einsum("tij,tj->ti", M, P[:, 0])[:, :, None]], axis=2)
        W = np.ascontiguousarray(W.reshape(-1, 12))
        for t in range(len(P)):
            rows = W[t].reshape(3, 4)[:, :3]
            g = np.vstack([-rows.sum(axis=0), rows])           # each coordinate's gradient
            k = rng.integers(4)
            lam = rng.dirichlet(np.ones(4))
            lam[k] = -BARY_TOL * rng.uniform(0.0, 1.0)        # just outside face k, held
            lam /= lam.sum()
            q = lam @ P[t]
            if not holds(W, t, *q):
                continue
            half = rng.uniform(0.01, 1.0, 3) * np.abs(P[t] - q).max()
            centre = q - np.sign(g[k]) * half                 # q is the box's corner
            assert may_hold(W, t, *centre, *half), (offset, t)
            size = np.abs(P[t] - P[t].mean(axis=0)).max()
            far = P[t].mean(axis=0) + 50 * size
            assert not may_hold(W, t, *far, *np.full(3, 0.1 * size))


def test_locate_blocks_of_points():
    """locate_points works PREFETCH_BLOCK points at a time: batches of every
    length around it, with points outside the box and NaN among them,
    answer as one point at a time."""
    from regn.query.locating._locate_kernels import PREFETCH_BLOCK, locate_points
    from regn.query.locating.locate import locate_tables
    m = _make(seed=2)[0]
    tables = locate_tables(m)
    rng = np.random.default_rng(4)
    pts = rng.uniform(-1.2 * L, 1.2 * L, (5 * PREFETCH_BLOCK + 3, 3))
    pts[::5] = np.nan
    want = brute_locate(m, pts)
    for n in (0, 1, PREFETCH_BLOCK - 1, PREFETCH_BLOCK, PREFETCH_BLOCK + 1, len(pts)):
        out = np.full(n, -7, np.int64)
        locate_points(tables, pts[:n], out)
        np.testing.assert_array_equal(out, want[:n])


def test_query_argument_errors(mesh):
    """Wrong argument types raise the library's error, never numpy's."""
    with pytest.raises(QueryError, match="complex"):
        mesh.locate(np.array([[1 + 2j, 0, 0]]))
    with pytest.raises(QueryError, match="complex"):
        mesh.find_path([1j, 0, 0], [0, 0, 0])
    for bad in ("x", 2.5, float("inf"), None):
        with pytest.raises(QueryError, match="whole number"):
            mesh.random_points(bad)
    assert mesh.random_points(np.int64(3), seed=1).shape == (3, 3)
    assert mesh.random_points(4.0, seed=1).shape == (4, 3)
    T = mesh.n_tets
    a, b = mesh.random_points(2, seed=5)
    flat = mesh.find_path(a, b, exclude=np.zeros(T, bool), cost_scale=np.ones(T))
    col = mesh.find_path(a, b, exclude=np.zeros((T, 1), bool), cost_scale=np.ones((T, 1)))
    assert col.cost == flat.cost
    with pytest.raises(QueryError, match="exclude"):
        mesh.find_path(a, b, exclude=np.zeros(T + 1, bool))


def test_locate_bad_input(mesh):
    pts = np.array([[np.nan, 0, 0], [np.inf, 0, 0], [0, -np.inf, 0], [1e300, 1e300, 1e300]])
    assert np.all(mesh.locate(pts) == -1)
    r = mesh.nearest(pts)
    assert np.all(r.tets == -1) and np.all(np.isnan(r.points))
    assert not np.any(mesh.line_of_sight(pts, np.zeros_like(pts)))
    assert np.isinf(mesh.distance_to_wall(pts)[-1])
    assert mesh.locate(np.zeros((0, 3))).shape == (0,)
    with pytest.raises(QueryError):
        mesh.locate(np.zeros((4, 2)))
    with pytest.raises(QueryError):
        mesh.locate([["a", "b", "c"]])


def _reference_graph(mesh, s, g):
    """The same face graph, built independently with scipy.sparse.csgraph."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import dijkstra
    from regn.format.layout import PORTAL_PAIRS
    F = mesh.n_faces
    S, G = mesh.locate(np.stack([s, g]))
    rows, cols, w = [], [], []
    for T in range(mesh.n_tets):
        for p, (i, j) in enumerate(PORTAL_PAIRS):
            if mesh.neighbors[T, i] >= 0 and mesh.neighbors[T, j] >= 0:
                rows.append(mesh.tet_faces[T, i])
                cols.append(mesh.tet_faces[T, j])
                w.append(mesh.portal_costs[T, p, 0])
    cen = mesh.face_centroids
    for f, nbr in zip(mesh.tet_faces[S], mesh.neighbors[S]):
        if nbr >= 0:
            rows.append(F)
            cols.append(f)
            w.append(np.linalg.norm(cen[f] - s))
    for f, nbr in zip(mesh.tet_faces[G], mesh.neighbors[G]):
        if nbr >= 0:
            rows.append(f)
            cols.append(F + 1)
            w.append(np.linalg.norm(cen[f] - g))
    r, c, w = np.array(rows), np.array(cols), np.array(w)
    M = coo_matrix((w, (r, c)), shape=(F + 2, F + 2)).tocsr()
    M = M.maximum(M.T)
    return dijkstra(M, indices=F)[F + 1]


def test_path_cost_matches_dijkstra(mesh):
    A = mesh.random_points(12, seed=5)
    B = mesh.random_points(12, seed=6)
    for a, b in zip(A, B):
        p = mesh.find_path(a, b)
        ref = _reference_graph(mesh, a, b)
        if mesh.locate(a[None])[0] == mesh.locate(b[None])[0]:
            continue
        if not np.isfinite(ref):
            assert p.status == "unreachable"
            continue
        assert p.found and p.status == "ok"
        assert p.cost == pytest.approx(ref, rel=1e-9)
        assert p.length <= p.cost * (1 + 1e-9)
        # the taut polyline stays inside the volume (it may leave the
        # corridor where it sees past a point of the corridor's polyline)
        seg = p.points[:-1, None] + np.linspace(0.01, 0.99, 25)[None, :, None] * \
            np.diff(p.points, axis=0)[:, None]
        t = mesh.locate(seg.reshape(-1, 3))
        assert np.all(t >= 0)
        assert mesh.line_of_sight(p.points[:-1], p.points[1:]).all()
        # the smoother's polyline (one waypoint per portal; ``points`` keeps
        # its turning points): segment i lies in corridor tet i
        tri = mesh.vertices[mesh.face_vertices[p.portals]]
        X = regn.query.paths.smooth.smooth_polyline(a, b, tri)
        assert len(p.tets) == len(X) - 1
        seg = X[:-1, None] + np.linspace(0.01, 0.99, 25)[None, :, None] * \
            np.diff(X, axis=0)[:, None]
        bc = _barycentric(mesh.tet_points[p.tets], seg)             # (k,25,4)
        assert bc.min() > -1e-7
        # unsmoothed: centroids, same cost
        q = mesh.find_path(a, b, smooth=False)
        assert q.cost == pytest.approx(p.cost) and q.length >= p.length - 1e-6


def _barycentric(P, x):
    """Barycentric coordinates of points x (k,m,3) in tetrahedra P (k,4,3)."""
    A = np.transpose(P[:, 1:] - P[:, :1], (0, 2, 1))
    l = np.transpose(np.linalg.solve(A, np.transpose(x - P[:, :1], (0, 2, 1))), (0, 2, 1))
    return np.concatenate([1 - l.sum(2, keepdims=True), l], axis=2)


def test_path_dijkstra_fallback_and_scale(mesh):
    a, b = mesh.random_points(2, seed=9)
    base = mesh.find_path(a, b)
    half = mesh.find_path(a, b, cost_scale=np.full(mesh.n_tets, 0.5))    # heuristic off
    assert half.found
    # scaling every tet by 0.5 halves the portal part; start/goal links stay
    assert half.cost <= base.cost
    double = mesh.find_path(a, b, cost_scale=np.full(mesh.n_tets, 2.0))
    assert double.cost >= base.cost
    with pytest.raises(QueryError):
        mesh.find_path(a, b, cost_scale=np.ones(3))


def test_path_statuses(mesh):
    a, b = mesh.random_points(2, seed=11)
    assert mesh.find_path([2 * L, 0, 0], b).status == "start_outside"
    with pytest.raises(QueryError, match="goal: x is nan, not a finite coordinate"):
        mesh.find_path(a, [np.nan, 0, 0])
    ex = np.zeros(mesh.n_tets, bool)
    ex[mesh.locate(a[None])[0]] = True
    assert mesh.find_path(a, b, exclude=ex).status == "excluded"
    # excluding the corridor forces a different (not cheaper) route or none
    p = mesh.find_path(a, b)
    ex = np.zeros(mesh.n_tets, bool)
    ex[p.tets[1:-1]] = True
    q = mesh.find_path(a, b, exclude=ex)
    assert (not q.found and q.status == "unreachable") or q.cost >= p.cost - 1e-9
    if q.found:
        assert not np.any(ex[q.tets])
    with pytest.raises(QueryError):
        mesh.find_path([0, 0], b)


def test_unreachable_component():
    # two separate blobs of tets: a box cut in half by a slab of removed tets
    rng = np.random.default_rng(2)
    pts = np.vstack([[[x, y, z] for x in (-L, L) for y in (-L, L) for z in (-L, L)],
                     rng.uniform(-L, L, (200, 3))])
    tets = Delaunay(pts).simplices
    cx = pts[tets][:, :, 0]
    keep = (cx.max(1) < 0) | (cx.min(1) > 0)
    m = regn.build(pts, tets[keep], bbox=((-L,) * 3, (L,) * 3), dims=(4, 4, 4))
    lab = m.components()
    assert len(np.unique(lab)) >= 2
    ta, tb = np.flatnonzero(lab == lab[0])[0], np.flatnonzero(lab != lab[0])[0]
    a, b = m.tet_points[ta].mean(0), m.tet_points[tb].mean(0)
    assert m.find_path(a, b).status == "unreachable"


def test_smoothing_matches_generic_solver():
    from scipy.optimize import minimize
    from regn.query.paths.smooth import smooth_polyline
    rng = np.random.default_rng(0)
    for _ in range(4):
        k = 4
        tri = rng.normal(size=(k, 3, 3)) + np.arange(1, k + 1)[:, None, None] * np.array([3, 0, 0])
        s, g = np.array([0.0, 0, 0]), np.array([3.0 * (k + 1), 2, -1])
        pts = smooth_polyline(s, g, tri)
        mine = np.linalg.norm(np.diff(pts, axis=0), axis=1).sum()

        def f(z):
            w = z.reshape(k, 2)
            x = tri[:, 0] + w[:, :1] * (tri[:, 1] - tri[:, 0]) + w[:, 1:] * (tri[:, 2] - tri[:, 0])
            return np.linalg.norm(np.diff(np.vstack([s, x, g]), axis=0), axis=1).sum()
        cons = [{"type": "ineq", "fun": lambda z: z},
                {"type": "ineq", "fun": lambda z: 1 - z.reshape(k, 2).sum(1)}]
        best = min(minimize(f, np.full(2 * k, 1 / 3) + rng.uniform(-.1, .1, 2 * k), method="SLSQP",
                            constraints=cons, options={"ftol": 1e-12, "maxiter": 500}).fun
                   for _ in range(3))
        assert mine <= best * (1 + 1e-3)
        assert mine >= best * (1 - 1e-3)


def _brute_first_hit(mesh, a, b):
    tri = mesh.vertices[mesh.face_vertices[mesh.boundary_faces]]
    d = b - a
    e1, e2 = tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]
    h = np.cross(d, e2)
    det = (e1 * h).sum(1)
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = 1 / det
        sv = a - tri[:, 0]
        u = (sv * h).sum(1) * inv
        q = np.cross(sv, e1)
        v = (q @ d) * inv
        t = (q * e2).sum(1) * inv
    ok = (np.abs(det) > 0) & (u >= -1e-9) & (v >= -1e-9) & (u + v <= 1 + 1e-9) & (t > 1e-9) & (t <= 1)
    return t[ok].min() if ok.any() else None


def test_raycast_vs_brute_force(mesh):
    A = mesh.random_points(60, seed=21)
    B = np.random.default_rng(3).uniform(-L, L, (60, 3))
    los = mesh.line_of_sight(A, B)
    for a, b, l in zip(A, B, los):
        r = mesh.raycast(a, b)
        ref = _brute_first_hit(mesh, a, b)
        inside_b = mesh.locate(b[None])[0] >= 0
        if ref is None:
            assert r.clear and inside_b
        else:
            assert not r.clear and r.status == "hit"
            assert r.t == pytest.approx(ref, abs=1e-7)
            assert r.face in mesh.boundary_faces
            np.testing.assert_allclose(r.point, a + ref * (b - a), atol=1e-3)
            assert np.linalg.norm(r.normal) == pytest.approx(1, abs=1e-6)
            assert np.dot(r.normal, b - a) > 0            # out of the volume: along the ray
        assert l == r.clear
        assert r.tets[0] == mesh.locate(a[None])[0]
        assert all(r.tets[i + 1] in mesh.neighbors[r.tets[i]] for i in range(len(r.tets) - 1))


def test_raycast_bad_input(mesh):
    assert mesh.raycast([2 * L, 0, 0], [0, 0, 0]).status == "start_outside"
    with pytest.raises(QueryError, match="a: x is nan"):
        mesh.raycast([np.nan, 0, 0], [0, 0, 0])
    assert not mesh.line_of_sight([[np.nan, 0, 0]], [[0, 0, 0]])[0]
    with pytest.raises(QueryError):
        mesh.line_of_sight(np.zeros((2, 3)), np.zeros((3, 3)))


def test_nearest_and_distance(mesh):
    rng = np.random.default_rng(4)
    pts = np.vstack([rng.uniform(-1.3 * L, 1.3 * L, (150, 3)), [[np.nan, 0, 0]]])
    r = mesh.nearest(pts)
    inside = mesh.locate(pts) >= 0
    np.testing.assert_array_equal(r.points[inside], pts[inside])
    np.testing.assert_array_equal(r.tets[inside], mesh.locate(pts[inside]))
    tri = mesh.vertices[mesh.face_vertices[mesh.boundary_faces]]
    dw = mesh.distance_to_wall(pts)
    assert np.isnan(dw[-1]) and r.tets[-1] == -1
    for i in range(len(pts) - 1):
        x = closest_on_triangles(np.repeat(pts[i:i + 1], len(tri), 0), tri)
        ref = np.linalg.norm(x - pts[i], axis=1).min()
        assert dw[i] == pytest.approx(ref, rel=1e-9, abs=1e-6)
        if not inside[i]:
            assert np.linalg.norm(r.points[i] - pts[i]) == pytest.approx(ref, rel=1e-9, abs=1e-6)
            assert r.tets[i] >= 0


def test_random_points_and_components(mesh):
    p = mesh.random_points(500, seed=1)
    assert p.shape == (500, 3) and np.all(mesh.locate(p) >= 0)
    np.testing.assert_array_equal(p, mesh.random_points(500, seed=1))
    lab = mesh.components()
    assert lab.shape == (mesh.n_tets,)
    nb = mesh.neighbors
    t, k = np.nonzero(nb >= 0)
    assert np.all(lab[t] == lab[nb[t, k]])


def test_cli(tmp_path, capsys, monkeypatch, mesh):
    import io
    from regn.cli import main
    f = tmp_path / "m.regn"
    regn.save(mesh, f)
    a, b = mesh.random_points(2, seed=3)
    monkeypatch.setattr("sys.stdin", io.StringIO(f"{a[0]} {a[1]} {a[2]}\n{2*L} 0 0\n"))
    assert main(["locate", str(f)]) == 0
    out = capsys.readouterr().out.split()
    assert [int(x) for x in out] == [int(mesh.locate(a[None])[0]), -1]
    np.save(tmp_path / "p.npy", np.stack([a, b]))
    assert main(["locate", str(f), "--json", "--points", str(tmp_path / "p.npy")]) == 0
    assert json.loads(capsys.readouterr().out) == mesh.locate(np.stack([a, b])).tolist()
    assert main(["path", str(f), *map(str, a), *map(str, b), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert set(d) == {"found", "status", "cost", "length", "points", "tets", "portals"}
    assert d["found"] and d["status"] == "ok"
    assert main(["path", str(f), *map(str, a), "1e6", "0", "0", "--json", "--no-smooth"]) == 1
    assert json.loads(capsys.readouterr().out)["status"] == "goal_outside"
    rc = main(["raycast", str(f), *map(str, a), *map(str, b), "--json"])
    d = json.loads(capsys.readouterr().out)
    assert rc == (0 if d["clear"] else 1)
    assert main(["nearest", str(f), "--json", "--points", str(tmp_path / "p.npy")]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 2


def test_cli_path_cost_scale_and_exclude(tmp_path, capsys, mesh):
    from regn.cli import main
    f = tmp_path / "m.regn"
    regn.save(mesh, f)
    a, b = mesh.random_points(2, seed=13)
    free = mesh.find_path(a, b)
    scale = np.random.default_rng(1).uniform(1, 3, mesh.n_tets)
    mid = free.tets[len(free.tets) // 2]
    np.save(tmp_path / "s.npy", scale)
    np.save(tmp_path / "e.npy", np.array([mid]))
    ends = [*map(str, a), *map(str, b)]
    assert main(["path", str(f), *ends, "--json", "--cost-scale", str(tmp_path / "s.npy"),
                 "--exclude", str(tmp_path / "e.npy")]) in (0, 1)
    d = json.loads(capsys.readouterr().out)
    mask = np.zeros(mesh.n_tets, bool)
    mask[mid] = True
    want = mesh.find_path(a, b, cost_scale=scale, exclude=mask)
    assert d["status"] == want.status and d["tets"] == want.tets.tolist()
    if want.found:
        assert mid not in d["tets"] and d["cost"] == pytest.approx(want.cost, rel=1e-12)
    np.save(tmp_path / "bad.npy", np.array([mesh.n_tets]))
    assert main(["path", str(f), *ends, "--exclude", str(tmp_path / "bad.npy")]) == 2
    assert "out of range" in capsys.readouterr().err
    np.save(tmp_path / "short.npy", np.ones(3))
    assert main(["path", str(f), *ends, "--cost-scale", str(tmp_path / "short.npy")]) == 2
    assert "cost_scale" in capsys.readouterr().err


def test_cli_batch_raycasts_and_clearance(tmp_path, capsys, monkeypatch, mesh):
    import io
    from regn.cli import main
    f = tmp_path / "m.regn"
    regn.save(mesh, f)
    A = np.vstack([mesh.random_points(30, seed=8), [[2 * L, 0, 0]]])
    B = np.vstack([np.random.default_rng(9).uniform(-L, L, (30, 3)), [[0, 0, 0]]])
    lines = "".join(f"{' '.join(map(repr, a.tolist()))},{' '.join(map(repr, b.tolist()))}\n"
                    for a, b in zip(A, B))
    monkeypatch.setattr("sys.stdin", io.StringIO("# x0 y0 z0 x1 y1 z1\n" + lines))
    assert main(["raycasts", str(f)]) == 0
    rows = [ln.split() for ln in capsys.readouterr().out.splitlines()]
    want = [mesh.raycast(a, b) for a, b in zip(A, B)]
    assert [r[0] for r in rows] == [w.status for w in want]
    assert [int(r[1]) for r in rows] == [w.face for w in want]
    hits = [i for i, w in enumerate(want) if w.status == "hit"]
    assert hits and rows[-1][0] == "start_outside"
    for i in hits:
        np.testing.assert_allclose([float(x) for x in rows[i][3:6]], want[i].point, atol=1e-5)
    np.save(tmp_path / "s.npy", np.hstack([A, B]))
    assert main(["raycasts", str(f), "--segments", str(tmp_path / "s.npy"), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert [x["clear"] for x in d] == [w.clear for w in want]
    monkeypatch.setattr("sys.stdin", io.StringIO("1 2 3 4 5\n"))
    assert main(["raycasts", str(f)]) == 2
    assert "6 numbers" in capsys.readouterr().err
    np.save(tmp_path / "p.npy", A)
    assert main(["clearance", str(f), "--points", str(tmp_path / "p.npy"), "--json"]) == 0
    np.testing.assert_allclose(json.loads(capsys.readouterr().out),
                               mesh.distance_to_wall(A), rtol=1e-12)
    # --wall: the nearest wall too, as nearest_wall answers it
    w = mesh.nearest_wall(A)
    assert main(["clearance", str(f), "--points", str(tmp_path / "p.npy"), "--wall",
                 "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert [x["face"] for x in d] == w.faces.tolist()
    np.testing.assert_allclose([x["distance"] for x in d], w.distances, rtol=1e-12)
    np.testing.assert_allclose([x["point"] for x in d], w.points, rtol=1e-12)
    np.testing.assert_allclose([x["normal"] for x in d], w.normals, rtol=1e-12)
    assert main(["clearance", str(f), "--points", str(tmp_path / "p.npy"), "--wall"]) == 0
    rows = [r.split() for r in capsys.readouterr().out.splitlines()]
    assert all(len(r) == 8 for r in rows) and len(rows) == len(A)
    assert [int(r[4]) for r in rows] == w.faces.tolist()
    np.testing.assert_allclose([[float(x) for x in r[5:]] for r in rows], w.normals,
                               atol=1e-8)


@pytest.fixture(scope="module")
def field():
    """An asteroid field: hundreds of small wall triangles on the asteroids
    and a few huge ones on the box."""
    from regn.builder.generate import demo_field, generate
    bbox, obs = demo_field(seed=3, n=12)
    return generate(bbox, obs, dims=(6, 6, 6), coverage_samples=0)


def test_distance_to_wall_against_trimesh(field):
    """Independent reference: trimesh's closest point on the boundary surface,
    for points inside, in asteroids, outside the box and far away."""
    import trimesh
    rng = np.random.default_rng(8)
    pts = np.vstack([field.random_points(300, seed=4),
                     rng.uniform(-60_000, 60_000, (300, 3)),
                     rng.normal(size=(20, 3)) * 5e6])
    surf = trimesh.Trimesh(field.vertices, field.face_vertices[field.boundary_faces],
                           process=False)
    _, ref, _ = trimesh.proximity.closest_point(surf, pts)
    dw = field.distance_to_wall(pts)
    np.testing.assert_allclose(dw, ref, rtol=1e-9, atol=1e-6)
    r = field.nearest(pts)
    out = field.locate(pts) < 0
    np.testing.assert_allclose(np.linalg.norm(r.points[out] - pts[out], axis=1), ref[out],
                               rtol=1e-9, atol=1e-6)
    assert np.all(field.locate(r.points[out]) >= 0)
