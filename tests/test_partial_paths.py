"""find_path(partial=True): a goal that cannot be reached gets the path to
the reachable point nearest it, judged against a brute-force reference (the
start's region by scipy's connected components over the tetrahedra not
excluded, the distance from the goal to each of its tetrahedra by the
reference closest point on their faces)."""

import json

import numpy as np
import pytest
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

import regn
from regn.cli import main
from regn.errors import QueryError

from test_query import L, _make, brute_locate, closest_on_triangles


@pytest.fixture(scope="module")
def mesh():
    return _make(400, seed=7, holes=5)[0]


def _region(mesh, start_tet, excl):
    """(T,) bool: the tetrahedra a point can fly to from start_tet without
    entering an excluded one (every stored cost of these maps is finite)."""
    nb = np.asarray(mesh.neighbors)
    t = np.repeat(np.arange(mesh.n_tets), 4)
    u = nb.ravel()
    keep = (u >= 0) & ~excl[t] & ~excl[np.maximum(u, 0)]
    graph = coo_matrix((np.ones(keep.sum()), (t[keep], u[keep])),
                       shape=(mesh.n_tets, mesh.n_tets))
    _, label = connected_components(graph, directed=False)
    return (label == label[start_tet]) & ~excl


def _distance_to_region(mesh, goal, region):
    """Distance from ``goal`` to the union of the region's tetrahedra."""
    tets = np.flatnonzero(region)
    if (brute_locate(mesh, goal[None]) >= 0).any() and region[brute_locate(mesh, goal[None])[0]]:
        return 0.0
    fv = np.asarray(mesh.face_vertices)[np.asarray(mesh.tet_faces)[tets]].reshape(-1, 3)
    tri = np.asarray(mesh.vertices, np.float64)[fv]
    near = closest_on_triangles(np.repeat(goal[None], len(tri), 0), tri)
    return float(np.linalg.norm(near - goal, axis=1).min())


def _check_partial(mesh, start, goal, path, excl):
    S = int(mesh.locate(start[None])[0])
    region = _region(mesh, S, excl)
    assert path.status == "partial" and path.found and bool(path)
    end = path.points[-1]
    np.testing.assert_array_equal(path.points[0], start)
    assert region[mesh.locate(end[None])[0]]                 # it ends where it may
    want = _distance_to_region(mesh, goal, region)
    assert abs(np.linalg.norm(end - goal) - want) <= 1e-6 * L   # the nearest such point
    again = mesh.find_path(start, end, exclude=excl)              # and is find_path's path
    assert again.status == "ok" and again.cost == path.cost
    assert np.all(region[path.tets])


def test_a_goal_in_a_rock_gets_the_nearest_point_of_its_surface(mesh):
    rng = np.random.default_rng(1)
    starts = mesh.random_points(6, seed=2)
    lo, hi = np.asarray(mesh.bbox_min), np.asarray(mesh.bbox_max)
    goals = rng.uniform(lo, hi, (400, 3))
    goals = goals[mesh.locate(goals) < 0][:6]                 # in the holes
    goals = np.vstack([goals, [[2 * L, 0, 0], [0, -3 * L, L]]])   # and out of the box
    none = np.zeros(mesh.n_tets, bool)
    for s, g in zip(starts, goals):
        plain = mesh.find_path(s, g)
        assert plain.status == "goal_outside" and not plain.found
        _check_partial(mesh, s, g, mesh.find_path(s, g, partial=True), none)


def test_a_goal_cut_off_gets_the_nearest_point_on_this_side(mesh):
    """Exclude a slab across the map: goals beyond it are unreachable, or
    excluded when in the slab itself."""
    tp = np.asarray(mesh.tet_points)
    centres = tp.mean(axis=1)
    straddle = (tp[:, :, 0].min(axis=1) < 0) & (tp[:, :, 0].max(axis=1) >= 0)
    excl = straddle | (np.abs(centres[:, 0]) < 0.1 * L)
    pts = mesh.random_points(400, seed=5)
    t = mesh.locate(pts)
    west = pts[(centres[t, 0] < -0.3 * L) & ~excl[t]][:5]
    east = pts[(centres[t, 0] > 0.3 * L) & ~excl[t]][:5]
    slab = pts[excl[t]][:3]
    for s, g in zip(west, np.vstack([east[:2], slab[:2], east[2:]])):
        plain = mesh.find_path(s, g, exclude=excl)
        assert plain.status in ("unreachable", "excluded")
        _check_partial(mesh, s, g, mesh.find_path(s, g, exclude=excl, partial=True), excl)
        for e in mesh.find_path(s, g, exclude=excl, partial=True).points:
            assert e[0] <= 1e-9 * L                                # stayed on its side


def test_reachable_goals_and_stuck_starts_are_answered_as_without_partial(mesh):
    A, B = mesh.random_points(10, seed=8), mesh.random_points(10, seed=9)
    for a, b in zip(A, B):
        plain, part = mesh.find_path(a, b), mesh.find_path(a, b, partial=True)
        assert part.status == plain.status == "ok"
        np.testing.assert_array_equal(part.points, plain.points)
    excl = np.zeros(mesh.n_tets, bool)
    excl[mesh.locate(A[:1])[0]] = True                           # the start's own tet
    assert mesh.find_path(A[0], B[0], exclude=excl, partial=True).status == "excluded"
    assert mesh.find_path((9 * L, 0, 0), B[0], partial=True).status == "start_outside"


def test_the_batch_answers_as_one_query_at_a_time(mesh):
    starts = mesh.random_points(12, seed=10)
    goals = np.vstack([mesh.random_points(4, seed=11), [[2 * L, 0, 0]] * 4,
                       [[0, 0, 5 * L]] * 4])
    batch = mesh.find_paths(starts, goals, partial=True, workers=2)
    assert batch.found.all() and list(batch.status[4:]) == ["partial"] * 8
    for i, (s, g) in enumerate(zip(starts, goals)):
        one = mesh.find_path(s, g, partial=True)
        assert batch[i].status == one.status and batch[i].cost == one.cost
        np.testing.assert_array_equal(batch[i].points, one.points)


def test_bad_partial_arguments_are_refused(mesh):
    a, b = mesh.random_points(2, seed=12)
    with pytest.raises(QueryError, match="radius 0"):
        mesh.find_path(a, (2 * L, 0, 0), partial=True, radius=10.0)
    with pytest.raises(QueryError, match="radius 0"):
        mesh.find_paths([a], [b], partial=True, radius=10.0)
    with pytest.raises(QueryError, match="True or False"):
        mesh.find_path(a, b, partial="yes")
    assert mesh.find_path(a, b, partial=False, radius=10.0).status in (
        "ok", "start_too_close", "goal_too_close", "too_narrow")


def test_partial_from_the_command_line_and_the_service(mesh, tmp_path, capsys,
                                                       monkeypatch):
    f = tmp_path / "m.rgn"
    regn.save(mesh, f)
    a = mesh.random_points(1, seed=13)[0]
    goal = [2 * L, 0.0, 0.0]
    want = mesh.find_path(a, goal, partial=True)
    args = ["path", str(f), *map(str, a), *map(str, goal)]
    assert main(args) == 1
    assert capsys.readouterr().out.startswith("status goal_outside")
    assert main(args + ["--partial", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] == "partial" and doc["cost"] == want.cost
    np.testing.assert_allclose(doc["points"], want.points, rtol=1e-12)
    import io
    monkeypatch.setattr("sys.stdin", io.StringIO(" ".join(map(str, [*a, *goal])) + "\n"))
    assert main(["paths", str(f), "--partial"]) == 0
    assert capsys.readouterr().out.startswith("partial ")
    from regn.cli.serve_cmd import Service
    service = Service(mesh)
    line = json.dumps({"id": 3, "query": "path", "start": a.tolist(), "goal": goal,
                       "partial": True})
    got = json.loads(service.answer(line))
    assert got["status"] == "partial" and got["cost"] == want.cost
    bad = json.loads(service.answer(json.dumps({"id": 4, "query": "path", "start": a.tolist(),
                                                "goal": goal, "partial": "yes"})))
    assert bad["id"] == 4 and "partial: must be true or false" in bad["error"]
