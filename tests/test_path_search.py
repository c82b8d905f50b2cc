"""find_path's bidirectional search against an independent Dijkstra (issue 3).

The reference graph is built here from the mesh's public arrays with
scipy.sparse.csgraph, with cost_scale and exclude applied the way the cost
model in ``regn.query.paths.path`` states them. Each returned corridor is also
re-priced from the stored portal costs, so a wrong corridor or portal list
fails even when the cost is right.
"""

import numpy as np
import pytest
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import dijkstra

from regn.format.layout import PORTAL_PAIRS

from conftest import random_map

PAIR_INDEX = {}
for _p, (_i, _j) in enumerate(PORTAL_PAIRS):
    PAIR_INDEX[(_i, _j)] = PAIR_INDEX[(_j, _i)] = _p


@pytest.fixture(scope="module")
def holey():
    # ~2 000 tets, a fifth of them removed at random: many holes, detours
    # and a few disconnected pockets
    return random_map(420, seed=3, hole_fraction=0.2, dims=(6, 6, 6))


def _portal_edges(mesh, scale=None, excl=None):
    T = mesh.n_tets
    tt = np.repeat(np.arange(T), len(PORTAL_PAIRS))
    si = np.tile([i for i, _ in PORTAL_PAIRS], T)
    sj = np.tile([j for _, j in PORTAL_PAIRS], T)
    w = mesh.portal_costs[:, :, 0].reshape(-1).astype(float)
    keep = (mesh.neighbors[tt, si] >= 0) & (mesh.neighbors[tt, sj] >= 0)
    if scale is not None:
        w = w * scale[tt]
    if excl is not None:
        keep &= ~excl[tt]
    return mesh.tet_faces[tt, si][keep], mesh.tet_faces[tt, sj][keep], w[keep]


def _reference_cost(mesh, edges, s, g):
    F = mesh.n_faces
    S, G = mesh.locate(np.stack([s, g]))
    cen = mesh.face_centroids
    rows, cols, w = [edges[0]], [edges[1]], [edges[2]]
    for t, pt, node in ((S, s, F), (G, g, F + 1)):
        fs = mesh.tet_faces[t][mesh.neighbors[t] >= 0]
        rows.append(np.full(len(fs), node))
        cols.append(fs)
        w.append(np.linalg.norm(cen[fs] - pt, axis=1))
    r, c, w = np.concatenate(rows), np.concatenate(cols), np.concatenate(w)
    # a tiny epsilon keeps explicit zero-cost edges in the sparse matrix
    M = coo_matrix((w + 1e-300, (r, c)), shape=(F + 2, F + 2)).tocsr()
    M = M.maximum(M.T)                       # undirected
    return dijkstra(M, indices=F)[F + 1]


def _reprice(mesh, p, s, g, scale=None):
    """The corridor's cost from the stored arrays: start link, one portal
    cost per tet crossed between consecutive portals, goal link."""
    cen = mesh.face_centroids
    tets, portals = p.tets, p.portals
    assert len(tets) == len(portals) + 1
    assert mesh.locate(s[None])[0] == tets[0] and mesh.locate(g[None])[0] == tets[-1]
    cost = np.linalg.norm(cen[portals[0]] - s) + np.linalg.norm(cen[portals[-1]] - g)
    for k in range(1, len(portals)):
        t = tets[k]
        slots = list(mesh.tet_faces[t])
        i, j = slots.index(portals[k - 1]), slots.index(portals[k])
        c = float(mesh.portal_costs[t, PAIR_INDEX[(i, j)], 0])
        cost += c * (1.0 if scale is None else scale[t])
    for k, f in enumerate(portals):         # portal k joins tets k and k+1
        assert f in mesh.tet_faces[tets[k]] and f in mesh.tet_faces[tets[k + 1]]
        # (with cheap scaled tets a route may touch a face of a tet and turn
        # back into it: the cost model allows it, the corridor repeats the tet)
        if tets[k] != tets[k + 1]:
            slot = list(mesh.tet_faces[tets[k]]).index(f)
            assert mesh.neighbors[tets[k], slot] == tets[k + 1]
    return cost


def _pairs(mesh, n, seed):
    A = mesh.random_points(n, seed=seed)
    B = mesh.random_points(n, seed=seed + 1)
    S, G = mesh.locate(A), mesh.locate(B)
    return [(a, b) for a, b, x, y in zip(A, B, S, G) if x != y]


def test_costs_and_corridors_match_dijkstra(holey):
    edges = _portal_edges(holey)
    found = 0
    for a, b in _pairs(holey, 120, seed=21):
        p = holey.find_path(a, b, smooth=False)
        ref = _reference_cost(holey, edges, a, b)
        if not np.isfinite(ref):
            assert not p.found and p.status == "unreachable"
            continue
        found += 1
        assert p.found and p.cost == pytest.approx(ref, rel=1e-9)
        assert _reprice(holey, p, a, b) == pytest.approx(p.cost, rel=1e-9)
        # the unsmoothed polyline: s, portal centroids, g, and its length
        assert np.allclose(p.points[1:-1], holey.face_centroids[p.portals])
        assert p.length == pytest.approx(np.linalg.norm(np.diff(p.points, axis=0), axis=1).sum())
    assert found > 60


def test_random_cost_scale_and_exclude_match_dijkstra(holey):
    rng = np.random.default_rng(5)
    checked = 0
    for a, b in _pairs(holey, 40, seed=31):
        S, G = holey.locate(np.stack([a, b]))
        scale = rng.uniform(0.3, 3.0, holey.n_tets)          # some below 1
        excl = rng.random(holey.n_tets) < 0.15
        excl[[S, G]] = False
        p = holey.find_path(a, b, smooth=False, cost_scale=scale, exclude=excl)
        ref = _reference_cost(holey, _portal_edges(holey, scale, excl), a, b)
        if not np.isfinite(ref):
            assert not p.found and p.status == "unreachable"
            continue
        checked += 1
        assert p.cost == pytest.approx(ref, rel=1e-9)
        assert not np.any(excl[p.tets])
        assert _reprice(holey, p, a, b, scale) == pytest.approx(p.cost, rel=1e-9)
    assert checked > 10


def test_inadmissible_stored_costs_still_optimal():
    """Costs below the centroid distance (another writer's choice) switch
    the Euclidean bound off; the search must stay exact."""
    mesh = random_map(260, seed=8, hole_fraction=0.1, dims=(6, 6, 6))
    rng = np.random.default_rng(2)
    pc = np.array(mesh.portal_costs)
    pc[:, :, 0] *= rng.uniform(0.05, 1.0, pc.shape[:2])
    pc = pc.astype(np.float32).astype(np.float64)   # as a file would store them
    mesh.__dict__["portal_costs"] = pc         # before the first search
    from regn.query.paths.path import _graph
    assert not _graph(mesh)["admissible"]
    edges = _portal_edges(mesh)
    n = 0
    for a, b in _pairs(mesh, 30, seed=41):
        p = mesh.find_path(a, b, smooth=False)
        ref = _reference_cost(mesh, edges, a, b)
        if np.isfinite(ref):
            n += 1
            assert p.cost == pytest.approx(ref, rel=1e-9)
            assert _reprice(mesh, p, a, b) == pytest.approx(p.cost, rel=1e-9)
    assert n > 10


def test_costs_breaking_the_triangle_inequality_turn_back():
    """Another writer's costs (all at least the centroid distance, so the
    bounds stay on) that break the triangle inequality in most tetrahedra:
    there the search must expand back into the tetrahedron it came through,
    and the optimal routes do turn back (a corridor repeats a tetrahedron)."""
    mesh = random_map(260, seed=9, hole_fraction=0.1, dims=(6, 6, 6))
    rng = np.random.default_rng(4)
    pc = np.array(mesh.portal_costs)
    pc[:, :, 0] *= rng.choice([1.0, 1.0, 6.0], pc.shape[:2])
    mesh.__dict__["portal_costs"] = pc.astype(np.float32).astype(np.float64)
    from regn.query.paths.path import _graph, _triangle_tets
    assert _graph(mesh)["admissible"]
    kept = _triangle_tets(mesh.tet_faces.astype(np.int64), mesh.neighbors,
                          mesh.portal_costs[:, :, 0], PORTAL_PAIRS)
    assert 0.05 < kept.mean() < 0.95             # both kinds of tetrahedra
    edges = _portal_edges(mesh)
    found = turned = 0
    for a, b in _pairs(mesh, 60, seed=43):
        p = mesh.find_path(a, b, smooth=False)
        ref = _reference_cost(mesh, edges, a, b)
        if not np.isfinite(ref):
            continue
        found += 1
        assert p.cost == pytest.approx(ref, rel=1e-9)
        assert _reprice(mesh, p, a, b) == pytest.approx(p.cost, rel=1e-9)
        turned += bool(np.any(p.tets[1:] == p.tets[:-1]))
    assert found > 30 and turned > 0


def test_builder_costs_let_every_tet_skip_turning_back(holey):
    """The builder writes centroid distances, which obey the triangle
    inequality: the search may skip turning back everywhere."""
    from regn.query.paths.path import _triangle_tets
    kept = _triangle_tets(holey.tet_faces.astype(np.int64), holey.neighbors,
                          holey.portal_costs[:, :, 0], PORTAL_PAIRS)
    assert kept.mean() > 0.99


def test_adjacent_tets_and_repeated_queries(holey):
    """S and G sharing a face (the two searches meet on their seeds), and
    the same queries again: per-query stamps must not leak between queries."""
    t = int(np.flatnonzero((holey.neighbors >= 0).any(axis=1))[0])
    k = int(np.flatnonzero(holey.neighbors[t] >= 0)[0])
    u = int(holey.neighbors[t, k])
    f = holey.face_centroids[holey.tet_faces[t, k]]
    # just either side of the shared face: any other route costs far more
    a = f + 0.01 * (holey.tet_centres[t] - f)
    b = f + 0.01 * (holey.tet_centres[u] - f)
    p = holey.find_path(a, b, smooth=False)
    assert p.found and list(p.tets) == [t, u] and list(p.portals) == [holey.tet_faces[t, k]]
    assert p.cost == pytest.approx(np.linalg.norm(f - a) + np.linalg.norm(b - f), rel=1e-12)
    pairs = _pairs(holey, 30, seed=51)
    first = [holey.find_path(x, y, smooth=False).cost for x, y in pairs]
    again = [holey.find_path(x, y, smooth=False).cost for x, y in reversed(pairs)][::-1]
    assert first == again
    # reversing start and goal gives the same cost (the graph is undirected)
    back = [holey.find_path(y, x, smooth=False).cost for x, y in pairs]
    assert np.allclose(first, back, rtol=1e-12, equal_nan=True)


def test_query_stamps_wrap(holey):
    """The per-face stamps are uint16: crossing the wrap must clear them."""
    from regn.query.paths.path import MAX_QID, _graph
    pairs = _pairs(holey, 12, seed=61)
    before = [holey.find_path(x, y, smooth=False).cost for x, y in pairs]
    _graph(holey)["qid"][0] = MAX_QID - 5
    after = [holey.find_path(x, y, smooth=False).cost for x, y in pairs]
    assert _graph(holey)["qid"][0] < 20          # it wrapped
    assert before == after


def test_builder_costs_bound_the_centroid_polyline(holey):
    """Stored costs are float32 rounded up: never below the centroid distance
    a reader computes, so the unsmoothed path (the portal-centroid polyline)
    is never longer than its cost, and smoothing only shortens it."""
    pc = holey.portal_costs[..., 0].astype(np.float64)
    fc, tf, pairs = holey.face_centroids, holey.tet_faces, np.array(PORTAL_PAIRS)
    dist = np.linalg.norm(fc[tf[:, pairs[:, 0]]] - fc[tf[:, pairs[:, 1]]], axis=2)
    assert np.all(pc >= dist)
    A, B = holey.random_points(200, seed=31), holey.random_points(200, seed=32)
    found = 0
    for a, b in zip(A, B):
        p = holey.find_path(a, b, smooth=False)
        if p.found and len(p.portals):
            found += 1
            assert p.length <= p.cost
            assert holey.find_path(a, b).length <= p.length
    assert found > 150


def test_threads_sharing_a_mesh_get_their_own_paths(holey):
    """The search state lives in the mesh's cache: threads searching one mesh
    at once must each get the answer a lone call gives."""
    from concurrent.futures import ThreadPoolExecutor
    A, B = holey.random_points(120, seed=41), holey.random_points(120, seed=42)
    want = [holey.find_path(a, b) for a, b in zip(A, B)]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda ab: holey.find_path(*ab), zip(A, B)))
    for p, q in zip(got, want):
        assert p.status == q.status and p.cost == q.cost
        assert np.array_equal(p.portals, q.portals) and np.array_equal(p.points, q.points)
