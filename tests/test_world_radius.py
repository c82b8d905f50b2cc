"""Paths for a sphere of radius r across a world's tiles, and clearances
next to a tile's shared walls (regn.world.clearance, regn.world.radius).

The shared field world of tests/conftest.py (a 40 km cube, 12 asteroids) as 2x2x2
tiles and as one REGN; and a 4 km cube holding one ball of 2.3 km (the
ball pokes out of every face: what is free is the cube's twelve edges, the
widest 219 m round) as 2x2x2 tiles and as one REGN; a slab between two
rocks with a 500 m gap on the tiles' shared planes."""

import numpy as np
import pytest

import regn
from conftest import FIELD_WORLD_BOX, FIELD_WORLD_H, field_world_rocks, one_error_line
from regn.builder.obstacles import Sphere
from regn.cli import main
from regn.errors import QueryError
from regn.world import build as build_world
from regn.world.route import straighten

H = FIELD_WORLD_H
BOX = FIELD_WORLD_BOX
G = 2_000.0
BALL = [Sphere((0.0, 0.0, 0.0), 2_300.0)]


_field = field_world_rocks


@pytest.fixture(scope="module")
def field(field_world, field_single):
    """The shared 2x2x2 world (conftest), opened, and one REGN of its rocks."""
    return field_world / "world.json", regn.load(field_world / "world.json"), field_single


@pytest.fixture(scope="module")
def ball(tmp_path_factory):
    d = tmp_path_factory.mktemp("rball")
    box = ((-G,) * 3, (G,) * 3)
    build_world(box, BALL, out=str(d / "world.json"), tile_size=G, workers=1,
                coverage_samples=0, detail=8.0)
    single = regn.generate(box, BALL, detail=8.0, coverage_samples=0)
    return d / "world.json", regn.load(d / "world.json"), single


def _taut_length(single, path, r):
    pts = straighten(single, path.points, r)
    return float(np.linalg.norm(np.diff(pts, axis=0), axis=1).sum())


def _pairs(world, single, n=40, seed=7):
    rng = np.random.default_rng(seed)
    for a, b in rng.uniform(-0.95 * H, 0.95 * H, (n, 2, 3)):
        if min(world.locate([a])[0], world.locate([b])[0], single.locate([a])[0],
               single.locate([b])[0]) >= 0:
            yield a, b


@pytest.mark.parametrize("r", [200.0, 1000.0])
def test_radius_paths_match_one_regn(field, r):
    """The same reachability (status) and the same lengths as one REGN's
    radius path made taut the same way."""
    _, world, single = field
    ratio, crossing, n = [], 0, 0
    for a, b in _pairs(world, single):
        p, q = world.find_path(a, b, radius=r), single.find_path(a, b, radius=r)
        n += 1
        assert p.status == q.status
        if p.found and q.found:
            ratio.append(p.length / _taut_length(single, q, r))
            assert np.allclose(p.points[0], a) and np.allclose(p.points[-1], b)
            crossing += len(p.tiles) > 1
    diff = np.abs(np.array(ratio) - 1)
    assert n >= 30 and len(diff) >= 25 and crossing >= 15
    assert np.median(diff) <= 0.005
    assert np.mean(diff <= 0.02) >= (0.95 if r < 500 else 0.8)
    assert diff.max() <= (0.03 if r < 500 else 0.06)


def test_radius_paths_keep_the_radius(field):
    """Every point of every segment of a world's radius path is at least r
    from the world's walls (regn.world.walls: every tile's real walls,
    measured by brute force)."""
    _, world, single = field
    r, checked = 1000.0, 0
    for a, b in list(_pairs(world, single))[:12]:
        p = world.find_path(a, b, radius=r)
        if not p.found:
            continue
        t = np.linspace(0, 1, 41)[:, None]
        pts = np.vstack([x + t * (y - x) for x, y in zip(p.points[:-1], p.points[1:])])
        assert world.distance_to_wall(pts).min() >= r * (1 - 1e-9)
        checked += len(p.tiles) > 1
    assert checked >= 3


def test_goal_next_to_a_shared_wall(field):
    """The issue: a goal 1 m from a shared tile plane, deep in open space,
    was 'goal_too_close' (the tile counted the plane as a wall)."""
    _, world, single = field
    a, b = np.array([-9000.0, -9000.0, -12000.0]), np.array([-1.0, -9000.0, -12000.0])
    assert world.distance_to_wall([b])[0] > 1000.0
    assert world.tile(world.tile_at([b])[0]).distance_to_wall([b])[0] < 2.0
    for r in (100.0, 500.0):
        p, q = world.find_path(a, b, radius=r), single.find_path(a, b, radius=r)
        assert p.status == q.status == "ok"
        assert p.length == pytest.approx(8999.0, rel=1e-9)      # in sight: one segment
        assert len(p.points) == 2
        on = world.find_path(b, b + (9000.0, 0, 0), radius=r)      # across the plane
        assert on.status == "ok" and len(on.tiles) == 2
        assert on.length == pytest.approx(9000.0, rel=1e-9)


def test_a_radius_wider_than_the_gap_is_refused_alike(ball):
    """Round the ball the widest way is 219 m: paths from corner to corner
    (crossing three tile planes) for smaller radii, too_narrow for larger,
    in both; the lengths agree."""
    _, world, single = ball
    a, b = np.full(3, -1574.0), np.full(3, 1574.0)
    for r in (100.0, 180.0, 230.0, 300.0):
        p, q = world.find_path(a, b, radius=r), single.find_path(a, b, radius=r)
        assert p.status == q.status == ("ok" if r < 219 else "too_narrow"), r
        if p.found:
            assert len(p.tiles) >= 3
            assert p.length / _taut_length(single, q, r) == pytest.approx(1.0, abs=0.03)
            t = np.linspace(0, 1, 41)[:, None]
            pts = np.vstack([x + t * (y - x) for x, y in zip(p.points[:-1], p.points[1:])])
            assert world.distance_to_wall(pts).min() >= r * (1 - 1e-9)
    assert world.find_path(a, b).found                  # a point passes
    assert world.find_path(a, np.full(3, 1900.0), radius=150.0).status == "goal_too_close"


def test_distance_to_wall_next_to_a_tile_plane(field):
    """Points 1 m from a shared plane whose nearest wall is the world's
    box: the world, the single REGN and the box agree; the tile alone
    says ~1 m. Near rocks (whose meshes differ between the two builds) the
    world's tile wall sets (regn.world.clearance) answer as the world's
    brute-force distance, up to their margin."""
    from regn.world.clearance import tile_bvh, tile_distance
    _, world, single = field
    f = _field()
    C = np.array([s.centre for s in f])
    R = np.array([s.radius for s in f])
    rng = np.random.default_rng(2)
    p = rng.uniform(-0.98 * H, 0.98 * H, (1500, 3))
    p[np.arange(len(p)), rng.integers(0, 3, len(p))] = rng.choice([-1.0, 1.0], len(p))
    p = p[(world.locate(p) >= 0) & (single.locate(p) >= 0)]
    rock = (np.linalg.norm(p[:, None] - C[None], axis=2) - R).min(axis=1)
    box = (H - np.abs(p)).min(axis=1)
    dw, ds = world.distance_to_wall(p), single.distance_to_wall(p)
    by_box = (box < 1500) & (box < rock - 300)
    assert by_box.sum() >= 50
    assert np.allclose(dw[by_box], box[by_box], rtol=1e-9)
    assert np.allclose(ds[by_box], dw[by_box], rtol=1e-9)
    tiles = world.tile_at(p)
    own = np.array([world.tile(t).distance_to_wall(x[None])[0] for t, x in zip(tiles, p)])
    assert np.all(own <= 1.0 + 1e-6)
    dt = np.array([tile_distance(world, t, x)[0] for t, x in zip(tiles, p)])
    margin = min(tile_bvh(world, t)[0] for t in range(world.n_tiles))
    near = dw <= margin
    assert near.sum() >= 60 and (near & (rock < box)).sum() >= 5
    assert np.allclose(dt[near], dw[near], rtol=1e-12)
    assert np.all(dt[~near] >= margin)


def test_partial_with_a_radius_is_refused_as_for_one_regn(field):
    _, world, single = field
    with pytest.raises(QueryError, match="partial paths are a point's"):
        world.find_path((0, 0, 0), (1e3, 1e3, 1e3), radius=100.0, partial=True)
    with pytest.raises(QueryError, match="partial paths are a point's"):
        single.find_path((0, 0, 0), (1e3, 1e3, 1e3), radius=100.0, partial=True)


def test_cli_path_radius_on_a_manifest(field, capsys):
    path, world, _ = field
    args = ["-15000", "-14000", "-13000", "15000", "14000", "13500"]
    assert main(["path", str(path), *args, "--radius", "500", "--json"]) == 0
    import json
    got = json.loads(capsys.readouterr().out)
    want = world.find_path((-15e3, -14e3, -13e3), (15e3, 14e3, 13.5e3), radius=500.0)
    assert got["status"] == "ok" == want.status
    assert got["length"] == pytest.approx(want.length)
    assert main(["path", str(path), "-19990", "0", "0", "0", "0", "0", "--radius", "500"]) == 1
    assert capsys.readouterr().out.splitlines()[0] == "status start_too_close"


def test_cli_max_tiles_holds_a_sphere_path_across_the_world(field, capsys, tmp_path):
    """A sphere's path across more tiles than the world holds is refused with
    the --max-tiles that fits; given, the path is found. A crowd (regn fly)
    is refused on a world with one line, not a traceback."""
    path, world, _ = field
    args = [str(path), "-15000", "-14000", "-13000", "15000", "14000", "13500",
            "--radius", "500"]
    line = one_error_line(capsys, main(["path", *args, "--max-tiles", "1"]), "--max-tiles ")
    need = line.rsplit("--max-tiles ", 1)[1].rstrip(")")
    assert int(need) > 2
    assert main(["path", *args, "--max-tiles", need, "--json"]) == 0
    assert '"status": "ok"' in capsys.readouterr().out
    agents = tmp_path / "a.csv"
    agents.write_text("x,y,z,gx,gy,gz,radius,max_speed,max_accel\n"
                      "-15000,-14000,-13000,15000,14000,13500,100,300,50\n")
    one_error_line(capsys, main(["fly", str(path), "--agents", str(agents), "--steps", "2",
                                 "-o", str(tmp_path / "t.npz")]), "a world of tiles")


def test_partial_paths_across_tiles(field):
    """A goal inside a rock, or outside the world: the path to the
    reachable point nearest it, across tiles (status 'partial'), ending
    where one REGN's does: on the rock's meshed surface, on the box."""
    _, world, single = field
    a = np.array([-15e3, -14e3, -13e3])
    crossing = 0
    for rock in _field():
        g = np.array(rock.centre)
        p, q = world.find_path(a, g, partial=True), single.find_path(a, g, partial=True)
        assert p.status == q.status == "partial"
        gap = np.linalg.norm(p.points[-1] - g)
        assert rock.radius <= gap <= 1.03 * rock.radius
        assert gap == pytest.approx(np.linalg.norm(q.points[-1] - g), rel=0.02)
        crossing += len(p.tiles) > 1
    assert crossing >= 10
    p = world.find_path(a, (3 * H / 2, 0, 0), partial=True)
    assert p.status == "partial" and np.allclose(p.points[-1], (H, 0, 0), atol=1.0)
    assert world.find_path(a, (3 * H / 2, 0, 0)).status == "goal_outside"
    assert world.find_path(a, (15e3, 14e3, 13.5e3), partial=True).status == "ok"


def test_sphere_raycast_goes_through_linked_faces(field):
    """A sphere of 500 m from (-9, -9, -12) km along +x, through the
    shared plane x = 0, first touches the box wall x = 20 km (its centre
    at 19.5 km): the tiles' shared walls are not walls."""
    _, world, single = field
    a, b = np.array([-9000.0, -9000.0, -12000.0]), np.array([30000.0, -9000.0, -12000.0])
    for m in (world, single):
        hit = m.raycast(a, b, radius=500.0)
        assert hit.status == "hit"
        assert hit.t == pytest.approx(28500.0 / 39000.0, abs=1e-9)
        assert np.allclose(hit.point, (H, -9000.0, -12000.0), atol=1e-6)
        assert np.allclose(hit.normal, (1.0, 0.0, 0.0), atol=1e-9)
    assert world.line_of_sight(a, (19400.0, -9000.0, -12000.0), radius=500.0)[0]
    assert not world.line_of_sight(a, (19600.0, -9000.0, -12000.0), radius=500.0)[0]
    hit = world.raycast(a, b, radius=500.0)
    tile, face = np.searchsorted(world.face_offset, hit.face, side="right") - 1, hit.face
    assert world.manifest.tiles[tile].hi[0] == H and not world.linked[tile][
        face - world.face_offset[tile]]


def test_nearest_with_room_next_to_a_tile_plane(field):
    """nearest(radius=r): a point 1 m from a shared plane in open space has
    the room and stays, as in one REGN (its tile alone pushes it ~r away
    from the plane); a point 100 m from the box's wall moves to r from it."""
    _, world, single = field
    p = np.array([[-1.0, -9000.0, -12000.0], [100.0 - H, -9000.0, -12000.0]])
    got, one = world.nearest(p, radius=500.0), single.nearest(p, radius=500.0)
    assert np.array_equal(got.points[0], p[0])
    own = world.tile(world.tile_at(p[:1])[0]).nearest(p[:1], radius=500.0).points[0]
    assert np.linalg.norm(own - p[0]) >= 499.0
    assert np.array_equal(one.points[0], p[0])
    # (both at r from the box's wall; where along it depends on each mesh's
    # witnesses: a push off a flat wall does not settle in either)
    assert got.points[1][0] == pytest.approx(500.0 - H, abs=0.01) == one.points[1][0]
    assert np.all(got.tets >= 0)
    assert world.distance_to_wall(got.points).min() >= 500.0


def test_a_radius_wider_than_the_gap_between_two_rocks(tmp_path):
    """A slab 8 x 8 x 2 km between two rocks of 4 km that leave a gap of
    500 m at the origin, on the tiles' shared planes (2x2x1 tiles): the
    only way from x = -3 km to x = 3 km. Both say ok at 200 and 260 m (a
    sphere may pass where the gap widens towards the slab's faces) and
    too_narrow at 300 m and more, with the same lengths."""
    box = ((-4000.0, -4000.0, -1000.0), (4000.0, 4000.0, 1000.0))
    rocks = [Sphere((0.0, 4250.0, 0.0), 4000.0), Sphere((0.0, -4250.0, 0.0), 4000.0)]
    build_world(box, rocks, out=str(tmp_path / "world.json"), tile_size=4000.0, workers=1,
                coverage_samples=0, detail=8.0)
    world = regn.load(tmp_path / "world.json")
    single = regn.generate(box, rocks, detail=8.0, coverage_samples=0)
    a, b = np.array([-3000.0, 0.0, 0.0]), np.array([3000.0, 0.0, 0.0])
    assert world.distance_to_wall([[0.0, 0.0, 0.0]])[0] == pytest.approx(
        single.distance_to_wall([[0.0, 0.0, 0.0]])[0], rel=0.01)
    for r, status in ((200.0, "ok"), (260.0, "ok"), (300.0, "too_narrow"),
                      (600.0, "too_narrow")):
        p, q = world.find_path(a, b, radius=r), single.find_path(a, b, radius=r)
        assert p.status == q.status == status, r
        if p.found:
            assert p.length / _taut_length(single, q, r) == pytest.approx(1.0, abs=0.02)
            assert len(p.tiles) >= 2
    assert world.find_path(a, b, radius=200.0).length == pytest.approx(6000.0)
