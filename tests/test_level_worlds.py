"""A level built as a world of tiles (regn.world.build with level=, regn build
--level ... -o DIR/world.json): every tile a strict REGN, the tiles' faces
on a shared plane the same triangles (so linked), paths across tiles, and
no point of any tile inside the INPUT's solid (analytic boxes and sheets,
as tests/test_levels.py checks a single build)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_levels import (
    TOL,
    _cave,
    _main,
    assert_clear_of_boxes,
    box_part,
    samples_in_tets,
    sheet_part,
    soup_of,
)

import regn
from regn.world import build as build_world
from regn.world.links import wall_faces
from regn.world.manifest import read_manifest

BOX = ((-1, -1, -1), (11, 11, 11))
#: A closed box across the tiles' shared plane x = 5, and a one-sided sheet.
ROCK = ((3, 3, 2), (8, 7, 9))
R = 0.3
VOX = 40 ** 3


def _soup():
    return soup_of([box_part(*ROCK), sheet_part(5.0, lo=(-1, -1), hi=(4, 11))])


@pytest.fixture(scope="module")
def world_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("level_world")
    build_world(BOX, level=_soup(), out=str(d / "world.json"), tile_size=(6, 12, 12),
                agent_radius=R, workers=1, coverage_samples=20_000,
                level_options={"max_voxels": VOX})
    return d


def _distance_to_sheet(p):
    """Distance to the sheet z = 5 over x in [-1, 4] (any y in the box)."""
    dx = np.maximum(p[:, 0] - 4, 0) + np.maximum(-1 - p[:, 0], 0)
    return np.hypot(dx, p[:, 2] - 5)


def test_every_tile_is_strict_and_clear_of_the_input(world_dir):
    m = read_manifest(world_dir / "world.json")
    assert tuple(m.grid) == (2, 1, 1)
    for t in m.tiles:
        assert regn.verify(str(world_dir / t.file), strict=True).ok
        mesh = regn.load(world_dir / t.file)
        assert mesh.n_tets > 0
        assert np.array_equal(mesh.bbox_min, t.lo) and np.array_equal(mesh.bbox_max, t.hi)
        assert_clear_of_boxes(mesh, [ROCK], R)
        assert _distance_to_sheet(samples_in_tets(mesh)).min() >= R - TOL
    assert m.build["coverage"] > 0.95


def test_the_shared_plane_is_the_same_triangles_on_both_sides(world_dir):
    world = regn.load(world_dir / "world.json")
    (lk,) = world.manifest.links
    assert lk.axis == 0 and lk.plane == 5.0
    _, ka = wall_faces(world.tile(lk.a), 0, 5.0)
    _, kb = wall_faces(world.tile(lk.b), 0, 5.0)
    sa, sb = {r.tobytes() for r in ka}, {r.tobytes() for r in kb}
    # the rock is solid on both sides and the rest open on both: every face
    # is there on both sides (the snap moved neither side's: pinned)
    assert len(sa) > 50 and sa == sb
    assert len(lk.faces) == len(sa & sb)
    # the rock's cut through the plane is no link: no linked face inside it
    cen = world.tile(lk.a).face_centroids[lk.faces[:, 0]]
    inside = np.all((cen[:, 1:] > np.array(ROCK[0][1:])) & (cen[:, 1:] < np.array(ROCK[1][1:])),
                    axis=1)
    assert not inside.any()


def _areas(keys):
    V = keys.reshape(-1, 3, 3)
    return 0.5 * np.linalg.norm(np.cross(V[:, 1] - V[:, 0], V[:, 2] - V[:, 0]), axis=1)


def test_the_shared_plane_links_all_of_its_open_area(world_dir):
    """Where both sides of the plane are open (a metre from the rock, the
    sheet and the box's edges) every face is linked; the build report's
    area share is the linked faces' area over the plane's faces' area,
    both sides, as summed here by hand."""
    world = regn.load(world_dir / "world.json")
    (lk,) = world.manifest.links
    fa, ka = wall_faces(world.tile(lk.a), 0, 5.0)
    fb, kb = wall_faces(world.tile(lk.b), 0, 5.0)
    cen = ka.reshape(-1, 3, 3).mean(axis=1)
    lo, hi = np.array(ROCK[0]) - R - 1.0, np.array(ROCK[1]) + R + 1.0
    near_rock = np.all((cen[:, 1:] > lo[1:]) & (cen[:, 1:] < hi[1:]), axis=1)
    near_sheet = np.abs(cen[:, 2] - 5.0) < R + 1.0      # the sheet ends at x = 4, 1 m off
    near_edge = np.any((cen[:, 1:] < BOX[0][1] + 1.0) | (cen[:, 1:] > BOX[1][1] - 1.0), axis=1)
    open_ = ~(near_rock | near_sheet | near_edge)
    assert open_.sum() > 10
    assert np.isin(fa[open_], lk.faces[:, 0]).all()
    linked_a = np.isin(fa, lk.faces[:, 0])
    share = 2 * _areas(ka)[linked_a].sum() / (_areas(ka).sum() + _areas(kb).sum())
    rep = world.manifest.build
    assert rep["linked_wall_area_fraction"] == pytest.approx(share, rel=1e-9)
    assert share > 0.99


def _lowest_inside(target, x, y, z):
    """The lowest of the heights ``z`` over (x, y) inside ``target``."""
    inside = target.locate(np.column_stack([np.full_like(z, x), np.full_like(z, y), z])) >= 0
    return z[np.argmax(inside)] if inside.any() else np.inf


def test_the_tiles_reach_the_walls_as_a_single_build_does(world_dir):
    """On top of the rock (z = 9, on both sides of the shared plane x = 5)
    the agent's centre can go down to z = 9 + R: a single build's snap
    (levels/snap.py) reaches it to a centimetre, and so do the world's
    tiles, away from the plane (on it the wall points stay at the voxels'
    corners, a voxel of 0.3 m up at most: without the snap every place
    here stays there, at 9.5)."""
    world = regn.load(world_dir / "world.json")
    z = np.arange(9.0, 10.5, 0.005)
    for x, y in ((3.5, 5.0), (4.0, 4.0), (6.0, 4.0), (7.0, 5.0), (7.5, 6.0)):
        assert 9 + R - TOL <= _lowest_inside(world, x, y, z) <= 9 + R + 0.02
    assert _lowest_inside(world, 5.0, 5.0, z) <= 9 + R + 12 / 40 + TOL
    m = read_manifest(world_dir / "world.json")
    assert all(t["snapped_vertices"] > 50 for t in m.build["per_tile"])
    assert m.build["linked_wall_fraction"] == 1.0


def test_a_path_crosses_between_tiles_around_the_rock(world_dir):
    world = regn.load(world_dir / "world.json")
    a, b = np.array([1.0, 5.0, 7.0]), np.array([10.0, 5.0, 5.0])
    p = world.find_path(a, b)
    assert p.found and len(p.tiles) == 2
    assert world.line_of_sight(p.points[:-1], p.points[1:]).all()
    pts = np.concatenate([np.linspace(u, v, 20) for u, v in zip(p.points[:-1], p.points[1:])])
    from test_levels import depth_in_boxes
    assert depth_in_boxes(pts, [ROCK]).max() <= TOL
    assert p.length >= np.linalg.norm(b - a)


def test_cli_builds_soup_and_voxel_worlds_and_finds_a_path(tmp_path, capsys):
    v, t = box_part(*ROCK)
    lines = [f"v {x} {y} {z}" for x, y, z in v] + [f"f {a + 1} {b + 1} {c + 1}" for a, b, c in t]
    (tmp_path / "rock.obj").write_text("\n".join(lines) + "\n")
    out = tmp_path / "w" / "world.json"
    code, stdout, stderr = _main(capsys, "build", "--level", tmp_path / "rock.obj", "--box", -1,
                                 -1, -1, 11, 11, 5, "--agent-radius", R, "--max-voxels",
                                 32 ** 3, "--tile-size", 6, "--workers", 1, "-o", out)
    assert code == 0, stderr
    assert "4 tiles 2x2x1" in stdout
    doc = json.loads(out.read_text())
    assert len(doc["tiles"]) == 4 and len(doc["links"]) == 4
    code, stdout, stderr = _main(capsys, "path", out, 1, 1, 3, 10, 10, 3, "--json")
    assert code == 0, stderr
    assert json.loads(stdout)["status"] == "ok"
    np.save(tmp_path / "occ.npy", _cave())
    code, stdout, stderr = _main(capsys, "build", "--voxels", tmp_path / "occ.npy",
                                 "--voxel-size", 2, "--tile-size", 24, "--workers", 1, "-o",
                                 tmp_path / "v" / "world.json", "--json")
    assert code == 0, stderr
    rep = json.loads(stdout)
    assert rep["tiles"] >= 2 and rep["level"]["kind"] == "voxels"


def test_solid_tiles_and_open_walls_of_a_voxel_world(tmp_path):
    """A voxel level whose upper half (in x) is solid: those tiles are REGNs
    without tetrahedra that still verify; the free tiles' walls, open on
    every side, are the same triangles on both sides (a rectangle's four
    corners alone could split either way), so a path crosses them."""
    from regn.levels import voxels_from_array
    occ = np.zeros((16, 8, 8), bool)
    occ[8:] = True
    occ[2:5, 2:5, 0:3] = True
    m = build_world(None, level=voxels_from_array(occ, 1.0), out=str(tmp_path / "world.json"),
                    tile_size=4, workers=1, coverage_samples=2000)
    assert tuple(m.grid) == (4, 2, 2)
    assert [t.tets == 0 for t in m.tiles] == [False] * 8 + [True] * 8
    for t in m.tiles:
        assert regn.verify(str(tmp_path / t.file), strict=True).ok
    world = regn.load(tmp_path / "world.json")
    p = world.find_path((0.5, 0.5, 7.5), (7.5, 7.5, 0.5))
    assert p.found and len(p.tiles) >= 3
    assert world.locate([(12.0, 4.0, 4.0)])[0] == -1


def test_process_pool_and_dask_give_the_same_level_tiles(tmp_path):
    distributed = pytest.importorskip("distributed")
    kw = {"level": _soup(), "tile_size": (6, 12, 12), "agent_radius": R, "coverage_samples": 0,
          "level_options": {"max_voxels": 24 ** 3}}
    a = build_world(BOX, out=str(tmp_path / "a" / "w.json"), workers=2, **kw)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        b = build_world(BOX, out=str(tmp_path / "b" / "w.json"), client=client, **kw)
    assert [t.sha256 for t in a.tiles] == [t.sha256 for t in b.tiles]
    assert [lk.faces.tolist() for lk in a.links] == [lk.faces.tolist() for lk in b.links]
    assert len(a.links[0].faces) > 0


def test_a_world_on_the_levels_own_bounds_verifies(tmp_path, capsys):
    """No box given: the world's box is the level's bounds grown by the
    agent, no round numbers. Every tile's REGN box is its manifest box
    exactly (a tile's grid frame used to move it by a few float32 steps, and
    the world failed verify), and the world passes --strict."""
    v, t = box_part((0.37, 0.11, 0.0), (7.93, 5.29, 3.3))
    level = tmp_path / "crate.obj"
    level.write_text("".join(f"v {x} {y} {z}\n" for x, y, z in v)
                     + "".join(f"f {a + 1} {b + 1} {c + 1}\n" for a, b, c in t))
    out = tmp_path / "w" / "world.json"
    assert _main(capsys, "build", "--level", level, "--agent-radius", 1.3, "--cavities", "air",
                 "--tile-size", 4, "--max-voxels", VOX, "-o", out)[0] == 0
    m = read_manifest(out)
    assert np.prod(m.grid) > 1 and not np.all(np.round(m.lo, 3) == m.lo)   # no round box
    code, text, _ = _main(capsys, "verify", out, "--strict")
    assert code == 0, text


def test_a_level_too_fine_for_one_regn_points_at_a_world():
    from regn.errors import LimitError
    from regn.levels import build_level
    with pytest.raises(LimitError) as e:
        build_level(BOX, _soup(), min_block=0.01, max_voxels=48 ** 3)   # 143 292 faces
    assert "-o DIR/world.json" in str(e.value) and "65535" in str(e.value)


def test_a_tile_whose_finest_grid_overflows_takes_a_coarser_one(tmp_path, monkeypatch):
    """A level tile of many small tetrahedra whose finest grid needs more
    cell references than the format holds is written with the next finest
    that fits, as a single build chooses (it was refused, telling the user
    to change a --dims never given). The format's limit is lowered here so
    that a small world meets it: the first tile's finest grid (4x8x8)
    needs about 16 000 references, the second's about 13 000."""
    import regn.builder.frame as frame
    monkeypatch.setattr(frame, "U16_MAX", 15_000)
    build_world(BOX, level=_soup(), out=str(tmp_path / "world.json"), tile_size=(6, 12, 12),
                agent_radius=R, workers=1, coverage_samples=0,
                level_options={"max_voxels": VOX, "snap": False})   # (the grid's choice alone)
    world = regn.load(tmp_path / "world.json")
    dims = [tuple(world.tile(i).dims) for i in range(world.n_tiles)]
    assert dims[1] == (4, 8, 8) and dims[0] in ((4, 8, 6), (4, 6, 8))
    for i in range(world.n_tiles):
        assert regn.verify(str(tmp_path / world.manifest.tiles[i].file), strict=True).ok
    assert world.find_path((0, 0, 0), (10, 10, 10)).found


def _kuhn_cube():
    """A unit cube's 8 corners and its 6 tetrahedra around the diagonal."""
    v = np.array([[i & 1, (i >> 1) & 1, (i >> 2) & 1] for i in range(8)], np.float64)
    paths = [(1, 2, 4), (1, 4, 2), (2, 1, 4), (2, 4, 1), (4, 1, 2), (4, 2, 1)]
    tets = []
    for a, b, c in paths:
        tets.append([0, a, a + b, 7])
    t = np.array(tets, np.int64)
    flip = np.einsum("ij,ij->i", np.cross(v[t[:, 1]] - v[t[:, 0]], v[t[:, 2]] - v[t[:, 0]]),
                     v[t[:, 3]] - v[t[:, 0]]) < 0
    t[flip] = t[flip][:, [1, 0, 2, 3]]
    return v, t


def test_a_tile_snaps_with_its_shared_face_pinned(monkeypatch):
    """A tile's mesh (a unit cube on the face x = 1 of its box, which a
    neighbour shares) over a floor 0.5 below: its free corners move (out
    to the box, the floor in sight and never nearer than R), the four on
    the shared face stay to the bit; and were the snap to drop a face there
    all the same, the tile keeps its corners."""
    from regn.levels import snap as snap_module
    from regn.levels.solid import Grid
    from regn.levels.tiles import TileWalls, snapped_tile
    v, t = _kuhn_cube()
    floor = np.array([[[-9, -9, -0.5], [9, -9, -0.5], [0, 9, -0.5]]], np.float64)
    shared = np.array([[False] * 3, [True, False, False]])
    walls = TileWalls(floor, np.zeros((0, 3)), np.zeros(0), R, 2.0, shared)
    grid = Grid(np.zeros(3), np.full(3, 0.25), (4, 4, 4))
    box = (np.array([-1.0, -1.0, -1.0]), np.array([1.0, 2.0, 2.0]))
    report = {"min_block": 0.5, "seconds": {}}
    pv, pt, _ = snapped_tile(v, t, report, box, grid, walls)
    assert not report["snap_kept_corners"] and report["snapped_vertices"] >= 2
    on_face = pv[:, 0] == 1.0
    assert sorted(map(tuple, pv[on_face])) == sorted(map(tuple, v[v[:, 0] == 1.0]))
    assert pv[~on_face, 2].min() >= -0.5 + R - TOL and pv[~on_face, 0].max() < 0
    a, b, c, d = (pv[pt[:, k]] for k in range(4))
    assert (np.einsum("ij,ij->i", np.cross(b - a, c - a), d - a) > 0).all()
    real = snap_module.snap

    def losing(verts, tets, *args, **kw):
        out = real(verts, tets, *args, **kw)
        keep = (out[0][out[1], 0] == 1.0).sum(axis=1) < 3      # no face on x = 1
        return (out[0], out[1][keep], *out[2:])
    monkeypatch.setattr(snap_module, "snap", losing)
    report = {"min_block": 0.5, "seconds": {}}
    kv, kt, _ = snapped_tile(v, t, report, box, grid, walls)
    assert report["snap_kept_corners"] and report["snapped_vertices"] == 0
    assert np.array_equal(kv, v) and np.array_equal(kt, t)
