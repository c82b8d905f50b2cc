"""A point's path across tiles as one compiled walk (regn.world.walk).

Two small worlds: a 40 km cube of 2x2x2 tiles (as tests/test_worlds.py),
and a row of 6 tiles (60 x 10 x 10 km) for routes longer than the tile
budget. The walk is checked against the search per tile it replaces
(``World.compiled_walk = False``, regn.world.route), against a tile's own
search, and against the world's line of sight."""

import numpy as np
import pytest

import regn
from conftest import FIELD_WORLD_H as H
from regn.builder.obstacles import Sphere
from regn.world import build as build_world

ROW = ((-30_000.0, -5_000.0, -5_000.0), (30_000.0, 5_000.0, 5_000.0))


@pytest.fixture(scope="module")
def cube(field_world):
    """The shared 2x2x2 world of tests/conftest.py (12 asteroids, 40 km)."""
    return field_world / "world.json"


@pytest.fixture(scope="module")
def row(tmp_path_factory):
    """6 tiles in a row, a rock in the middle of every other one (at detail
    0.25: some 1 400 tetrahedra a tile)."""
    d = tmp_path_factory.mktemp("row")
    rocks = [Sphere((x, 0.0, 0.0), 2_500.0) for x in (-25_000.0, -5_000.0, 15_000.0)]
    build_world(ROW, rocks, out=str(d / "world.json"), tile_size=10_000.0, workers=1,
                coverage_samples=0, detail=0.25)
    return d / "world.json"


def _pairs(world, n, seed, lo, hi):
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        a, b = rng.uniform(lo, hi, (2, 3))
        if world.locate([a])[0] >= 0 and world.locate([b])[0] >= 0:
            out.append((a, b))
    return out


def _clear(world, p):
    return bool(world.line_of_sight(p.points[:-1], p.points[1:]).all())


def test_walk_matches_the_search_per_tile(cube):
    """Same reachability; lengths within 1 % on most pairs (each within
    3 %); every segment clear; the ends where asked."""
    new = regn.load(cube)
    old = regn.load(cube)
    old.compiled_walk = False
    ratios, crossing = [], 0
    for a, b in _pairs(new, 30, 11, -0.95 * H, 0.95 * H):
        p, q = new.find_path(a, b), old.find_path(a, b)
        assert p.found == q.found
        if not p.found:
            continue
        assert np.allclose(p.points[0], a) and np.allclose(p.points[-1], b)
        assert _clear(new, p)
        assert p.length >= np.linalg.norm(b - a) * (1 - 1e-9)
        ratios.append(p.length / q.length)
        crossing += len(p.tiles) > 1
    r = np.array(ratios)
    assert len(r) >= 25 and crossing >= 15
    assert abs(np.median(r) - 1) <= 0.005
    assert np.mean(np.abs(r - 1) <= 0.01) >= 0.9
    assert np.all(np.abs(r - 1) <= 0.03)


def test_search_inside_one_tile_is_the_tiles_own_optimum(cube, monkeypatch):
    """With the plain Euclidean bound (weight 1) the
    compiled search's cost inside one tile is the tile's own optimal cost
    (the single mesh's bidirectional A*, the same stored costs)."""
    from regn.world import walk
    monkeypatch.setattr(walk, "BOUND_WEIGHT", 1.0)
    world = regn.load(cube)
    t = 0
    lo, hi = world.manifest.tiles[t].lo, world.manifest.tiles[t].hi
    mesh = world.tile(t)
    done = 0
    for a, b in _pairs(world, 40, 5, lo + 1.0, hi - 1.0):
        if world.tile_at([a])[0] != t or world.tile_at([b])[0] != t:
            continue
        own = mesh.find_path(a, b)
        if not own.found:
            continue
        p = world.find_path(a, b)
        assert p.found and p.tiles == [t]
        assert p.cost == pytest.approx(own.cost, rel=1e-6)
        done += 1
    assert done >= 10


def test_unsmoothed_path_is_the_corridor(cube):
    world = regn.load(cube)
    a, b = np.array([-15e3, -14e3, -13e3]), np.array([15e3, 14e3, 13.5e3])
    p = world.find_path(a, b)
    q = world.find_path(a, b, smooth=False)
    assert p.found and q.found and len(q.tiles) >= 2
    assert len(q.points) == len(q.portals) + 2        # s, one point per portal, g
    assert q.length >= p.length
    assert _clear(world, q)


def test_long_route_under_a_budget_of_two_tiles(row):
    """A route through all 6 tiles with max_tiles=2 (cut into windows of 2
    tiles) is found, clear, at most 2 tiles loaded, within 2 % of the
    route found with every tile loaded."""
    a, b = np.array([-29_000.0, 3_000.0, -3_000.0]), np.array([29_000.0, -3_000.0, 3_000.0])
    small = regn.load(row, max_tiles=2)
    full = regn.load(row, max_tiles=8)
    p, q = small.find_path(a, b), full.find_path(a, b)
    assert p.found and q.found
    assert len(p.tiles) == 6 and p.tiles == q.tiles
    assert len(small.loaded) <= 2
    assert _clear(full, p) and _clear(full, q)
    assert p.length == pytest.approx(q.length, rel=0.02)
    assert np.allclose(p.points[0], a) and np.allclose(p.points[-1], b)
    # the rocks are in the way: neither path is the straight line
    assert q.length > np.linalg.norm(b - a) * 1.0001


def test_radius_path_in_a_tile_keeps_clearance(row):
    """A radius is answered by the tile's own search (the walk takes a
    point's paths only): the path keeps the radius."""
    world = regn.load(row)
    a, b = np.array([-9_000.0, 3_000.0, -3_000.0]), np.array([-1_000.0, -3_000.0, 3_000.0])
    p = world.find_path(a, b, radius=300.0)
    assert p.found and p.tiles == [int(world.tile_at([a])[0])]
    assert world.line_of_sight(p.points[:-1], p.points[1:], radius=300.0).all()


def test_cli_path_on_a_world(cube, capsys):
    import json

    from regn.cli import main
    rc = main(["path", str(cube), "-15000", "-14000", "-13000", "15000", "14000", "13500",
               "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["found"]
    assert out["points"][0] == pytest.approx([-15000, -14000, -13000])


def test_kept_walk_arrays_are_the_ones_the_tile_gives(cube):
    """The walk's arrays kept in each tile's .query file are, type and bits,
    what the walk makes from the tile itself."""
    from regn.world.prepared import STATIC, static_arrays
    world = regn.load(cube)
    for t in range(world.n_tiles):
        kept = world.query_arrays(t)
        made = static_arrays(world.tile(t, prepared=False))
        assert set(made) == set(STATIC)
        for k, v in made.items():
            got = kept["walk_" + k]
            assert got.dtype == v.dtype == STATIC[k] and got.shape == v.shape, k
            assert got.tobytes() == v.tobytes(), k


def test_a_route_reads_the_tiles_of_its_ends_only(row):
    """Across the row of 6 tiles only the start's and the goal's tiles are
    read (parsed, located in); the 6 tiles' walk arrays come from their
    .query files, and the path is the one a world without them finds
    (each tile read and its arrays made from it)."""
    import shutil
    a, b = np.array([-29_000.0, 3_000.0, -3_000.0]), np.array([29_000.0, -3_000.0, 3_000.0])
    world = regn.load(row, max_tiles=8)
    p = world.find_path(a, b)
    assert p.found and len(p.tiles) == 6
    assert world.tiles_read == 2 and world.walk_reads == 6
    assert sorted(world.loaded) == sorted([p.tiles[0], p.tiles[-1]])
    bare = row.parent.parent / (row.parent.name + "-bare")
    shutil.copytree(row.parent, bare)
    for f in bare.glob("*.query"):
        f.unlink()
    plain = regn.load(bare / "world.json", max_tiles=8)
    q = plain.find_path(a, b)
    assert plain.walk_reads == 0 and plain.tiles_read == 6
    assert q.tiles == p.tiles and np.array_equal(q.points, p.points)


def test_taut_pass_keeps_the_ends_of_a_straight_run(cube):
    """50 points on a straight segment in sight: the taut pass (galloping
    along the run) keeps just its two ends. A world path with its segments
    cut into 20 points each: it keeps a path no longer than the world's,
    every kept segment clear."""
    from regn.world import _walk_kernels as K
    from regn.world.walk import tile_slots
    world = regn.load(cube)
    straight = bent = 0
    for a, b in _pairs(world, 300, 9, -0.95 * H, 0.95 * H):
        if straight >= 8 and bent >= 3:
            break
        if world.line_of_sight(a[None], b[None])[0]:
            if straight >= 8:
                continue
            pts = a + np.linspace(0.0, 1.0, 50)[:, None] * (b - a)
        else:
            p = world.find_path(a, b)
            if not p.found or len(p.points) < 3:
                continue
            f = np.linspace(0.0, 1.0, 21)[:-1, None]
            pts = np.vstack([x + f * (y - x) for x, y in zip(p.points[:-1], p.points[1:])]
                            + [p.points[-1:]])
        tiles, tets = world.locate_tiles(pts)
        if np.any(tets < 0):
            continue
        slots = tile_slots(world)
        allowed = slots.take(range(world.n_tiles))     # (a segment may clip a tile)
        L = slots.lists
        keep = K.straighten(L["W"], L["NBV"], L["FBV"], L["ACRF"], L["FT0"], slots.slot_of,
                            allowed, int(slots.slot_of[tiles[0]]), int(tets[0]), pts, len(pts))
        if len(pts) == 50:
            assert list(keep) == [0, 49]
            straight += 1
        else:
            kept = pts[keep]
            assert keep[0] == 0 and keep[-1] == len(pts) - 1
            assert world.line_of_sight(kept[:-1], kept[1:]).all()
            d = np.diff(kept, axis=0)
            assert np.sqrt((d * d).sum(axis=1)).sum() <= p.length * (1 + 1e-9)
            bent += 1
    assert straight >= 8 and bent >= 3


def test_answer_does_not_depend_on_what_else_is_loaded(cube):
    """The walk's line of sight stops at tiles outside the route's (a tile
    sitting in a slot from an earlier path is a wall too): a path is the
    same from a fresh world and after every tile was searched through."""
    fresh = regn.load(cube)
    pairs = _pairs(fresh, 12, 21, -0.95 * H, 0.95 * H)
    first = [fresh.find_path(a, b) for a, b in pairs]
    warm = regn.load(cube)
    for a, b in _pairs(warm, 30, 22, -0.95 * H, 0.95 * H):
        warm.find_path(a, b)
    assert len(warm._tile_slots.used) == warm.n_tiles
    crossing = 0
    for (a, b), p in zip(pairs, first):
        q = warm.find_path(a, b)
        assert q.status == p.status and q.tiles == p.tiles
        if p.found:
            assert np.array_equal(q.points, p.points)
            crossing += len(p.tiles) > 1
    assert crossing >= 4
