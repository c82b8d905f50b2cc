"""Swept spheres, and positions where a sphere fits (issue 16): raycast,
raycast_many and line_of_sight with a radius against the plain numpy
distances of clearance_reference.py on thousands of segments; nearest and
random_points with a radius against the same distances and against a
uniform sample."""

import numpy as np
import pytest
from scipy import stats
from scipy.spatial import cKDTree

from regn.errors import QueryError

from clearance_reference import points_clearance, segments_clearance, walls


def _segments(mesh, n, seed, length=4000.0):
    rng = np.random.default_rng(seed)
    a = mesh.random_points(n, seed=seed)
    return a, a + rng.normal(size=a.shape) * length


@pytest.mark.parametrize("name", ["demo_map", "holes_map"])
def test_swept_spheres_against_brute_force(name, request):
    mesh = request.getfixturevalue(name)
    tri = walls(mesh)
    a, b = _segments(mesh, 3000, seed=1)
    for r in (200.0, 1500.0):
        hits = mesh.raycast_many(a, b, radius=r)
        assert np.array_equal(mesh.line_of_sight(a, b, radius=r), hits.clear)
        # clear exactly where no wall comes within r of the segment
        near = np.isfinite(segments_clearance(a, b, tri, below=r * (1 + 1e-9)))
        far = ~np.isfinite(segments_clearance(a, b, tri, below=r * (1 - 1e-9)))
        assert np.all(hits.clear | near) and np.all(~hits.clear | far)
        assert set(hits.status) <= {"clear", "hit"} and 100 < (~hits.clear).sum() < 2900
        h = np.flatnonzero(~hits.clear)
        t = hits.t[h]
        assert np.all((t >= 0) & (t <= 1))
        centre = a[h] + t[:, None] * (b[h] - a[h])
        # the first contact: the way there keeps r, and there the sphere touches
        moving = t > 0
        assert not np.isfinite(segments_clearance(a[h][moving], centre[moving], tri,
                                                  below=r * (1 - 1e-9))).any()
        touch = points_clearance(centre, tri, below=r * (1 + 1e-9))
        assert np.allclose(touch[moving], r, rtol=1e-9)
        assert np.all(touch[~moving] <= r * (1 + 1e-9))      # touching at the start
        # the contact point lies on that wall, the normal points to it
        on = points_clearance(hits.point[h], tri, below=1e-6)
        assert np.all(on < 1e-6)
        assert np.allclose(np.linalg.norm(hits.normal[h], axis=1), 1.0)
        gap = hits.point[h] - centre
        assert np.allclose(gap[moving], r * hits.normal[h][moving], atol=1e-6 * r)
        assert np.all(mesh.locate(hits.point[h]) >= -1)
        # one at a time: the same answers, and the tetrahedra the centre crossed
        for i in range(0, 3000, 300):
            one = mesh.raycast(a[i], b[i], radius=r)
            assert one.status == hits.status[i] and one.face == hits.face[i]
            assert np.array_equal(one.point, hits.point[i], equal_nan=True)
            assert one.tets[0] == mesh.locate(a[i][None])[0]


def test_swept_sphere_edge_cases(holes_map):
    a = holes_map.random_points(3, seed=2)
    hits = holes_map.raycast_many([[1e9, 0, 0], a[0], [np.nan, 0, 0]],
                                  [a[1], [np.inf, 0, 0], a[2]], radius=10.0)
    assert list(hits.status) == ["start_outside", "lost", "start_outside"]
    assert holes_map.raycast(a[0], a[0], radius=10.0).clear
    empty = holes_map.raycast_many(np.zeros((0, 3)), np.zeros((0, 3)), radius=5.0)
    assert len(empty) == 0


@pytest.mark.parametrize("name", ["demo_map", "holes_map"])
def test_nearest_position_that_fits(name, request):
    mesh = request.getfixturevalue(name)
    tri = walls(mesh)
    rng = np.random.default_rng(3)
    lo, hi = mesh.bbox_min, mesh.bbox_max
    p = np.vstack([mesh.random_points(1500, seed=4),
                   (lo + hi) / 2 + rng.uniform(-0.65, 0.65, (1500, 3)) * (hi - lo)])
    for r in (300.0, 2000.0):
        res = mesh.nearest(p, radius=r)
        ok = res.tets >= 0
        assert ok.all()
        assert np.array_equal(mesh.locate(res.points), res.tets)
        assert not np.isfinite(points_clearance(res.points, tri, below=r)).any()
        # a point with the room already stays where it is
        room = (mesh.locate(p) >= 0) & ~np.isfinite(points_clearance(p, tri, below=r * 1.01))
        assert np.array_equal(res.points[room], p[room])
        # among convex rocks, no farther than the nearest of many free
        # samples, nearly always (where the walls of jagged holes meet the
        # box, pushes can settle farther away: docs/queries.md)
        if name == "demo_map":
            free = mesh.random_points(20000, seed=5, radius=r)
            moved = np.linalg.norm(res.points - p, axis=1)
            assert np.mean(moved <= cKDTree(free).query(p)[0] + 1e-6) > 0.99
    nan = mesh.nearest([[np.nan, 0, 0]], radius=100.0)
    assert np.isnan(nan.points).all() and nan.tets[0] == -1


@pytest.mark.parametrize("name", ["demo_map", "holes_map"])
def test_random_points_with_room_are_uniform(name, request):
    mesh = request.getfixturevalue(name)
    r = 1500.0
    pts = mesh.random_points(3000, seed=6, radius=r)
    assert pts.shape == (3000, 3) and np.all(mesh.locate(pts) >= 0)
    assert not np.isfinite(points_clearance(pts, walls(mesh), below=r)).any()
    assert np.array_equal(pts, mesh.random_points(3000, seed=6, radius=r))
    # the same law as uniform points of the whole volume that have the room
    ref = mesh.random_points(40000, seed=7)
    ref = ref[mesh.distance_to_wall(ref) >= r]
    for values in (lambda x: x[:, 0], lambda x: x[:, 2], mesh.distance_to_wall):
        assert stats.ks_2samp(values(pts), values(ref)).pvalue > 1e-3
    assert mesh.random_points(0, radius=r).shape == (0, 3)
    with pytest.raises(QueryError, match="clearance"):
        mesh.random_points(5, radius=1e6)
    with pytest.raises(QueryError):
        mesh.random_points(2.5, radius=r)


@pytest.mark.parametrize("name", ["demo_map", "holes_map"])
def test_a_sphere_whose_clearance_is_its_radius_touches_at_once(name, request):
    """Started exactly r from a wall (r = the start's own clearance) and
    moving into it, the sphere touches at once (t = 0 up to rounding),
    whatever the rounding of the distance at the start (found by the query fuzzer: a hit reported
    after the centre had crossed the wall)."""
    mesh = request.getfixturevalue(name)
    p = mesh.random_points(400, seed=7)
    r = mesh.distance_to_wall(p)
    q = mesh.nearest(p + 0.0).points             # inside points: themselves
    from regn.query.walls.nearest import _nearest_wall
    wall_pt = _nearest_wall(mesh, p)[0]
    b = p + 3.0 * (wall_pt - p)
    assert np.array_equal(q, p)
    plain = mesh.raycast_many(p, b)
    for i in np.flatnonzero(r > 1.0)[:200]:
        hit = mesh.raycast(p[i], b[i], radius=float(r[i]))
        reach = hit.t * np.linalg.norm(b[i] - p[i])
        assert hit.status == "hit" and reach <= 1e-6 * r[i] and hit.t <= plain.t[i]


def test_nearest_with_a_radius_of_absurdly_far_points(holes_map):
    """A point so far out that squared distances overflow has no nearest
    position with room: NaN and -1, as without a radius (no IndexError)."""
    res = holes_map.nearest([[1e300, 0.0, 0.0], [0.0, -1e300, 1e300]], radius=10.0)
    assert np.isnan(res.points).all() and (res.tets == -1).all()
    assert np.isnan(holes_map.nearest([[1e300, 0.0, 0.0]]).points).all()
