"""A point's path is made taut: on a level map (Delaunay tetrahedra of
octree corners, many slivers) it is a few straight legs, not the search
corridor's kinks; across a world's tiles it is never longer than a ship's."""

from __future__ import annotations

import numpy as np
import pytest

from regn.levels import generate_level
from regn.query.paths.waypoints import smoothed_turning_points

from test_levels import box_part, soup_of

#: flights across a 100 x 100 x 10 m room round a 20 x 20 m pillar
ROOM_FLIGHTS = [((10, 10, 5), (90, 90, 5)), ((10, 50, 5), (90, 50, 5)),
                ((5, 5, 1), (95, 90, 9)), ((50, 5, 2), (50, 95, 8))]


@pytest.fixture(scope="module")
def room():
    pillar = soup_of([box_part((40, 40, 0), (60, 60, 10))])
    return generate_level(((0, 0, 0), (100, 100, 10)), pillar, agent_radius=0.5,
                          max_voxels=32 ** 3, coverage_samples=0)


def _legs(points):
    """Segment lengths and the turn (degrees) at each interior point."""
    d = np.diff(points, axis=0)
    L = np.linalg.norm(d, axis=1)
    cos = np.einsum("ij,ij->i", d[:-1], d[1:]) / (L[:-1] * L[1:])
    return L, np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))


def _corridor_length(mesh, p):
    """The length of the shortest polyline through the path's corridor (what
    find_path returned before the taut pass)."""
    pts = smoothed_turning_points(mesh, np.asarray(p.points[0]), np.asarray(p.points[-1]),
                                  p.portals)[0]
    return float(np.linalg.norm(np.diff(pts, axis=0), axis=1).sum())


@pytest.mark.parametrize("a, b", ROOM_FLIGHTS)
def test_a_level_path_round_a_pillar_is_a_few_straight_legs(room, a, b):
    p = room.find_path(a, b)
    assert p.found
    assert 2 <= len(p.points) <= 4                   # was 12-17 points
    L, turns = _legs(p.points)
    assert L.min() > 1e-3                            # no sub-millimetre segment
    assert (turns >= 1.0).all()                      # every interior point turns
    assert room.line_of_sight(p.points[:-1], p.points[1:]).all()
    assert p.length == pytest.approx(L.sum())
    assert p.length <= _corridor_length(room, p) * (1 + 1e-12)
    assert p.length <= p.cost
    assert p.length >= np.linalg.norm(np.subtract(b, a))


def test_random_level_paths_stay_in_free_space_and_only_get_shorter(room):
    pts = room.random_points(120, seed=5)
    counts = []
    for a, b in zip(pts[::2], pts[1::2]):
        p = room.find_path(a, b)
        assert p.found
        L, turns = _legs(p.points)
        assert room.line_of_sight(p.points[:-1], p.points[1:]).all()
        assert L.min() > 1e-3
        assert p.length <= _corridor_length(room, p) * (1 + 1e-12)
        # the taut pass only drops points: each kept one is the smoother's
        smooth = smoothed_turning_points(room, np.asarray(a), np.asarray(b), p.portals)[0]
        assert all(np.any(np.all(smooth == q, axis=1)) for q in p.points)
        counts.append(len(p.points))
    # one of the 60 has 5 points on the snapped map (its boundary follows the
    # pillar's rounded clearance and the floor at the radius): 4 without the snap
    assert max(counts) <= 5 and np.median(counts) <= 3


def test_a_ships_level_path_is_a_few_straight_legs_clear_by_its_radius(room, monkeypatch):
    """A sphere's path gets the taut pass too, with the sphere's own sight:
    few points, each leg clear for the radius, never longer than the
    kept-clear smoother's polyline (the pass turned off)."""
    r = 1.5
    pts = room.random_points(40, seed=8, radius=r)
    pairs = list(zip(pts[::2], pts[1::2])) + [((10, 10, 5), (90, 90, 5))]
    paths = [room.find_path(a, b, radius=r) for a, b in pairs]
    import regn.query.paths.taut as taut
    monkeypatch.setattr(taut, "taut_points", lambda points, sees_from: points)
    before = [room.find_path(a, b, radius=r) for a, b in pairs]
    counts = []
    for p, q in zip(paths, before):
        assert p.found and q.found
        L, turns = _legs(p.points)
        assert room.line_of_sight(p.points[:-1], p.points[1:], radius=r).all()
        assert L.min() > 1e-3 and (turns >= 1.0).all()
        assert p.length <= q.length * (1 + 1e-12)
        counts.append(len(p.points))
    assert max(counts) <= 6 and np.median(counts) <= 3
    assert sum(len(q.points) for q in before) > sum(counts)


def test_a_path_that_sees_its_goal_is_one_segment(room):
    p = room.find_path((5, 5, 5), (95, 30, 5))         # passes south of the pillar
    assert room.line_of_sight([(5, 5, 5)], [(95, 30, 5)])[0]
    assert len(p.points) == 2
    assert p.length == pytest.approx(np.linalg.norm([90, 25, 0]))


def test_unsmoothed_paths_keep_their_centroids(room):
    a, b = ROOM_FLIGHTS[0]
    q = room.find_path(a, b, smooth=False)
    assert len(q.points) == len(q.portals) + 2


# --- across a world's tiles ----------------------------------------------------------

README_ENDS = ((-15000, -14000, -13000), (15000, 14000, 13500))


def test_a_points_path_across_tiles_is_never_longer_than_a_ships(field_world):
    import regn
    world = regn.load(str(field_world / "world.json"))
    a, b = README_ENDS
    p, ship = world.find_path(a, b), world.find_path(a, b, radius=500)
    assert p.found and ship.found
    assert p.length <= ship.length * (1 + 1e-12)     # was 48 877 against 48 849 m
    assert world.line_of_sight(p.points[:-1], p.points[1:]).all()
    assert p.length == pytest.approx(np.linalg.norm(np.diff(p.points, axis=0), axis=1).sum())
    assert p.length <= p.cost



def test_the_tiles_under_a_path_s_chords_are_those_their_points_lie_in(field_world):
    """taut_across sees through the tiles whose boxes the path's chords meet:
    every tile a dense sample of a chord lies in is among them, and no
    tile is there that no chord comes near."""
    import regn
    from regn.world.walk import _tiles_under
    world = regn.load(str(field_world / "world.json"))
    pts = np.array([(-15000.0, -14000, -13000), (-5000, 12000, -9000), (15000, 14000, 13500)])
    tiles = _tiles_under(world, pts, len(pts), 0)
    f = np.linspace(0.0, 1.0, 2001)[:, None]
    chords = np.vstack([a + f * (b - a) for i, a in enumerate(pts) for b in pts[i + 1:]])
    lo = np.array([t.lo for t in world.manifest.tiles])
    hi = np.array([t.hi for t in world.manifest.tiles])
    inside = np.all((chords[:, None] >= lo - 1.0) & (chords[:, None] <= hi + 1.0), axis=2)
    assert set(tiles) == set(np.flatnonzero(inside.any(axis=0)).tolist())
    assert tiles[0] == 0 and len(set(tiles)) == len(tiles)
    short = _tiles_under(world, pts, 1, 0)             # the path's own segments only
    assert set(short) <= set(tiles)
