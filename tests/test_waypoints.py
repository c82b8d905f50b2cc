"""A path's waypoints are only the points where it turns (issue 16): no
point on a straight stretch, no near-duplicates, every segment clear by
the segment walk, every portal of the corridor crossed, never longer than
the smoother's one-waypoint-per-portal polyline (and within its certified
gap of it), and dropping the straight-stretch points changes the length
by rounding only."""

import numpy as np
import pytest

from regn.query.paths import _polish_kernels as PK
from regn.query.paths import _turning_points_kernels as TP
from regn.query.paths.smooth import smooth_polyline
from regn.query.paths.waypoints import smoothed_turning_points
from regn.tolerances import SMOOTH_RTOL

from clearance_reference import segment_triangle
from conftest import random_map


@pytest.fixture(scope="module")
def riddled():
    """A Delaunay map with a fifth of its tetrahedra removed: pinches,
    grazes and detours."""
    return random_map(400, seed=7, hole_fraction=0.15, dims=(6, 6, 6))


def _length(x):
    return np.linalg.norm(np.diff(x, axis=0), axis=1).sum()


def _portal_triangles(mesh, path):
    return np.asarray(mesh.vertices)[np.asarray(mesh.face_vertices)[path.portals]]


def _portal_gaps(X, tri):
    """(P,) each portal triangle's distance from the polyline X: the least,
    over its segments, of clearance_reference's plain segment-triangle
    distance (every segment against every portal, in one batch)."""
    i, j = np.divmod(np.arange((len(X) - 1) * len(tri)), len(tri))
    d = segment_triangle(X[:-1][i], X[1:][i], tri[j, 0], tri[j, 1], tri[j, 2])
    return d.reshape(len(X) - 1, len(tri)).min(axis=0)


def _check_turning_points(mesh, a, b, path):
    # the corridor's turning points (find_path then makes them taut:
    # tests/test_path_taut.py), and the path: never longer, no straight points
    X = smoothed_turning_points(mesh, np.asarray(a, float), np.asarray(b, float),
                                path.portals)[0]
    tri = _portal_triangles(mesh, path)
    smoother = smooth_polyline(a, b, tri)
    L = _length(X)
    assert L <= _length(smoother) * (1 + 1e-12)
    assert L >= _length(smoother) / (1 + SMOOTH_RTOL)
    assert path.length <= L * (1 + 1e-12)
    assert np.isclose(path.length, _length(path.points), rtol=1e-14)
    assert mesh.line_of_sight(path.points[:-1], path.points[1:]).all()
    assert len(path.points) <= len(X)
    P = path.points
    saving = (np.linalg.norm(P[1:-1] - P[:-2], axis=1) + np.linalg.norm(P[2:] - P[1:-1], axis=1)
              - np.linalg.norm(P[2:] - P[:-2], axis=1))
    assert np.all(saving > 1e-12 * path.length)
    # every interior point is a turn: dropping it would shorten the path
    a_, b_, c_ = X[:-2], X[1:-1], X[2:]
    saving = (np.linalg.norm(b_ - a_, axis=1) + np.linalg.norm(c_ - b_, axis=1)
              - np.linalg.norm(c_ - a_, axis=1))
    assert np.all(saving > 1e-12 * L)
    # the walk finds every segment inside the volume
    assert mesh.line_of_sight(X[:-1], X[1:]).all()
    # and the polyline passes through every portal of the corridor
    assert np.all(_portal_gaps(X, tri) < 1e-6 * L)
    return len(path.points), len(path.portals)


def test_the_demo_flight_keeps_only_its_turns(demo_map):
    """The flight the issue measured: 71 waypoints, 13 segments under 10 m
    (its corridor crosses some 70 portals; the number moves with the
    builder)."""
    a, b = np.array([-47700.0, -47600.0, -48200.0]), np.array([46400.0, 49500.0, 45200.0])
    path = demo_map.find_path(a, b)
    n, k = _check_turning_points(demo_map, a, b, path)
    assert k >= 60 and n <= 20
    assert np.diff(path.points, axis=0).__abs__().sum(axis=1).min() > 100.0


@pytest.mark.parametrize("name", ["demo_map", "holes_map", "riddled"])
def test_random_flights_keep_only_their_turns(name, request):
    mesh = request.getfixturevalue(name)
    A, B = mesh.random_points(120, seed=8), mesh.random_points(120, seed=9)
    counts = []
    for a, b in zip(A, B):
        path = mesh.find_path(a, b)
        if path.found and len(path.portals):
            counts.append(_check_turning_points(mesh, a, b, path))
    n, k = np.array(counts).T
    assert len(counts) > 60 and np.median(n / (k + 2)) < 0.5


@pytest.mark.parametrize("name", ["demo_map", "riddled"])
def test_dropping_straight_points_keeps_the_length(name, request):
    mesh = request.getfixturevalue(name)
    A, B = mesh.random_points(60, seed=10), mesh.random_points(60, seed=11)
    for a, b in zip(A, B):
        path = mesh.find_path(a, b, smooth=False)
        if not path.found or len(path.portals) < 2:
            continue
        tri = np.ascontiguousarray(_portal_triangles(mesh, path))
        fv = np.asarray(mesh.face_vertices)[path.portals].astype(np.int64)
        X = smooth_polyline(a, b, tri)
        w = np.array([PK.plane_uv(tri, i, *X[i + 1]) for i in range(len(tri))])
        con, ncon = PK.constraint_table(None, None, len(tri), 0.0)
        P = np.empty_like(X)
        length, _ = PK.polish(a, b, tri, fv, con, ncon, w, P)
        out = np.empty_like(X)
        n = TP.simplify(a, b, tri, fv, None, None, w, X, 1e-6, TP.LENGTH_BUDGET_REL, 0.0, out,
                        np.empty(len(X), np.int64))
        # the polish settles, never longer than the smoother's polyline (a
        # bend between two points on its own line once stalled Newton's
        # method there), and dropping the straight points keeps its length
        assert length <= _length(X) * (1 + 1e-12)
        assert _length(out[:n]) == pytest.approx(_length(P), rel=1e-9)


def test_radius_paths_keep_only_their_turns(demo_map):
    A, B = demo_map.random_points(80, seed=12), demo_map.random_points(80, seed=13)
    r = 500.0
    ratio = []
    for a, b in zip(A, B):
        path = demo_map.find_path(a, b, radius=r)
        if not path.found or len(path.portals) == 0:
            continue
        X = path.points
        assert demo_map.line_of_sight(X[:-1], X[1:], radius=r).all()
        unsmoothed = demo_map.find_path(a, b, radius=r, smooth=False)
        assert path.length <= unsmoothed.length
        ratio.append(len(X) / (len(path.portals) + 2))
    assert len(ratio) > 40 and np.median(ratio) < 0.5


def test_pinched_flights_settle_on_their_turns():
    """On a map riddled with pinches and grazes, every path comes out as its
    turning points: the polish goes back to its best active set when a
    release does not pay (and tries the next), and a turn on a wall is
    nudged just far enough for the walk; none falls back to the
    smoother's one point per portal."""
    mesh = random_map(600, seed=5, hole_fraction=0.2, dims=(6, 6, 6))
    A, B = mesh.random_points(300, seed=1), mesh.random_points(300, seed=2)
    kept_all = found = 0
    for a, b in zip(A, B):
        path = mesh.find_path(a, b)
        if path.found and len(path.portals):
            found += 1
            kept_all += len(path.points) == len(path.portals) + 2
            assert mesh.line_of_sight(path.points[:-1], path.points[1:]).all()
    assert found > 250 and kept_all == 0
