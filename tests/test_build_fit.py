"""The builder fits the format by itself and never pinches; the box given is
the box written; a built mesh is valid or refused (issues 19 and 21)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

import regn
from regn.builder.frame import axis_frame, grid_frame, keeps_axis
from regn.builder.generate import DEMO_DIMS, demo_field, generate
from regn.builder.obstacles import Sphere, random_asteroid_field
from regn.cli import main
from regn.errors import BuildError, LimitError

H = 50_000.0
BOX = ((-H,) * 3, (H,) * 3)
U16 = 65_535


def _fits(mesh):
    return max(mesh.n_vertices, mesh.n_tets, mesh.n_faces, mesh.n_cells, mesh.n_items,
               mesh.n_refs) <= U16


def _watertight(mesh):
    """trimesh's verdict on the boundary surface, and its volume against the
    tetrahedra's."""
    import trimesh
    from regn.export.surface import boundary_surface
    surface = trimesh.Trimesh(*boundary_surface(mesh), process=False)
    return surface.is_watertight, surface.volume, float(mesh.tet_volumes.sum())


@pytest.fixture(scope="module")
def fields():
    """The asteroid fields of the issue, built at the defaults (the coverage
    figure from fewer samples: it does not change the mesh)."""
    out = {}
    for n in (10, 40, 100, 200, 400):
        out[n] = generate(BOX, random_asteroid_field(n, seed=1, half_extent=H),
                          seed=1, coverage_samples=20_000)
    return out


@pytest.mark.parametrize("n", [10, 40, 100, 200, 400])
def test_asteroid_fields_build_at_the_defaults_and_pass_strict(fields, n):
    mesh = fields[n]
    rep = mesh.build_report
    assert _fits(mesh)
    assert rep["clearance_ok"] and rep["pinch_edges"] == rep["pinch_vertices"] == 0
    assert rep["detail_chosen"] and rep["dims_chosen"] and rep["box_change"] is None
    assert rep["coverage"] >= {10: 0.99, 40: 0.98, 100: 0.96, 200: 0.93, 400: 0.88}[n]
    # the box given is the box written, exactly
    assert mesh.bbox_min.tolist() == [-H] * 3 and mesh.bbox_max.tolist() == [H] * 3
    assert np.array_equal(np.asarray(mesh.cell_size) * mesh.dims, np.full(3, 2 * H))
    report = regn.verify(regn.loads(mesh.dumps()), strict=True)
    assert report.ok, [c.name for c in report.checks if c.status == "fail"]


def test_larger_fields_lower_the_detail_and_the_grid_to_fit(fields):
    # more asteroids need more faces: past the point where detail 1 fits, the
    # builder lowers the detail, and the grid coarsens to fit the references
    assert fields[10].build_report["detail"] == 1.0
    assert list(fields[10].dims) == [10, 10, 10]
    assert fields[400].n_cells < 1000
    assert fields[400].n_faces > 0.8 * U16                     # it used the room it had


def test_demo_field_is_watertight():
    bbox, obs = demo_field()
    mesh = generate(bbox, obs, dims=DEMO_DIMS, seed=1, coverage_samples=0)
    closed, surface_volume, volume = _watertight(mesh)
    assert closed and surface_volume == pytest.approx(volume, rel=1e-9)


def test_200_asteroid_field_is_watertight(fields):
    closed, surface_volume, volume = _watertight(fields[200])
    assert closed and surface_volume == pytest.approx(volume, rel=1e-9)


def test_overlapping_and_touching_rocks_are_watertight():
    box = ((-20_000.0,) * 3, (20_000.0,) * 3)
    rocks = [Sphere((0, 0, 0), 5000), Sphere((7000, 0, 0), 3000),          # overlapping
             Sphere((-8000, 0, 0), 3000), Sphere((0, 9000, 0), 4000),      # touching
             Sphere((0, 0, 8000), 3000), Sphere((0, 0, 12_500), 1500),     # a touching chain
             Sphere((15_000, 15_000, 15_000), 8000)]                        # through a corner
    for r in (0.0, 300.0):
        mesh = generate(box, rocks, agent_radius=r, coverage_samples=0)
        assert mesh.build_report["clearance_ok"]
        closed, surface_volume, volume = _watertight(mesh)
        assert closed and surface_volume == pytest.approx(volume, rel=1e-9)


# --------------------------------------------------------------------------- settings

def test_given_dims_are_kept_or_refused_with_dims_that_fit(fields):
    obs = random_asteroid_field(200, seed=1, half_extent=H)
    with pytest.raises(LimitError, match=r"--dims 10 10 10 the grid needs \d+ cell references"
                       r".*--dims (\d+ \d+ \d+) fits") as err:
        generate(BOX, obs, seed=1, dims=(10, 10, 10), coverage_samples=0)
    hint = tuple(map(int, re.search(r"--dims (\d+ \d+ \d+) fits", str(err.value))[1].split()))
    assert err.value.what == "cell references" and err.value.count > U16
    mesh = generate(BOX, obs, seed=1, dims=hint, coverage_samples=0)
    assert mesh.dims == hint and not mesh.build_report["dims_chosen"]


def test_given_detail_is_kept_or_refused_with_a_detail_that_fits():
    box = ((0.0,) * 3, (20_000.0,) * 3)
    obs = random_asteroid_field(30, seed=2, half_extent=10_000.0, centre=(10_000.0,) * 3)
    # detail 6 needs ~105 000 faces (detail 8, ~140 000, took twice as long to refuse)
    with pytest.raises(LimitError, match=r"at --detail 6 the mesh needs \d+ \w+.*"
                       r"lower --detail \(([\d.]+) fits\)") as err:
        generate(box, obs, detail=6, coverage_samples=0)
    fits = float(err.value.args[0].split("lower --detail (")[1].split(" fits")[0])
    mesh = generate(box, obs, detail=fits, coverage_samples=0)
    assert mesh.build_report["detail"] == fits and _fits(mesh)


def test_when_nothing_fits_the_error_names_the_limit_and_what_helps():
    # 5832 pebbles 5.5 km apart: a dozen points around each are too many vertices
    axis = np.linspace(-0.95 * H, 0.95 * H, 18)
    obs = [Sphere(c, 200.0) for c in np.stack(np.meshgrid(axis, axis, axis), -1).reshape(-1, 3)]
    with pytest.raises(LimitError, match=r"5832 obstacles need \d+ vertices even at detail .*"
                       r"u16 limit of 65535: use fewer obstacles"):
        generate(BOX, obs, coverage_samples=0)


def test_obstacles_as_rows_of_numbers_are_spheres_and_others_are_named():
    box = ((-1000,) * 3, (1000,) * 3)
    want = regn.generate(box, [Sphere((0, 0, 0), 100)], coverage_samples=0).dumps()
    for given in ([(0, 0, 0, 100)], np.array([[0.0, 0, 0, 100]])):
        assert regn.generate(box, given, coverage_samples=0).dumps() == want
    for given, words in (([(0, 0, 0)], "got shape (1, 3)"), (["rock"], "obstacle 0 is a str"),
                         ([(0, 0, 0, 100), (1, 2)], "rows of different lengths")):
        with pytest.raises(BuildError, match=re.escape(words)):
            regn.generate(box, given)


def test_grid_cells_past_the_limit_are_refused_before_any_work():
    with pytest.raises(LimitError, match="60x60x60 has 216000 grid cells.*--dims"):
        generate(((0, 0, 0), (1000, 1000, 1000)), [], dims=(60, 60, 60), coverage_samples=0)


# --------------------------------------------------------------------------- the box

def test_the_box_given_is_the_box_written_when_float32_allows():
    for lo, hi, d in [(-H, H, 10), (-H, H, 8), (0.0, 33_333.25, 4), (-1.5, 2.5, 8)]:
        assert axis_frame(lo, hi, d)[:2] == (lo, hi)
    frame = grid_frame((-H, 0.0, -1.5), (H, 33_333.25, 2.5), (10, 4, 8))
    assert np.array_equal(frame.cell * frame.dims, frame.hi - frame.lo)
    assert frame.change((-H, 0.0, -1.5), (H, 33_333.25, 2.5)) is None


def test_the_quick_exact_frame_test_agrees_with_the_frame_search():
    # the grid candidates ask keeps_axis instead of running axis_frame's search
    rng = np.random.default_rng(5)
    ends = [(-H, H), (0.0, 33_333.25), (-1.5, 2.5), (0.1, 1000.0), (-12.7, 87.3),
            (0.0, 100.0), (1e-3, 1.0)]
    ends += [tuple(sorted(np.float32(rng.uniform(-1e5, 1e5, 2)).tolist())) for _ in range(12)]
    ends += [(float(a), float(a) + float(w)) for a, w in
             zip(rng.integers(-4096, 4096, 12) / 8, rng.integers(1, 4096, 12) / 4)]
    kept = 0
    for lo, hi in ends:
        for d in range(1, 31):
            same = axis_frame(lo, hi, d)[:2] == (lo, hi)
            assert keeps_axis(lo, hi, d) == same, (lo, hi, d)
            kept += same
    assert 0 < kept < 30 * len(ends)     # both answers occur


def test_a_box_float32_cannot_divide_moves_by_the_least_and_says_so():
    frame = grid_frame(BOX[0], BOX[1], (6, 6, 6))
    lo32, hi32, cell32 = (np.float32(x) for x in (frame.lo, frame.hi, frame.cell))
    assert np.array_equal(frame.lo, lo32) and np.array_equal(frame.hi, hi32)
    assert np.array_equal(cell32 * np.float32(6), hi32 - lo32)            # in float32 too
    assert np.array_equal(frame.cell * 6, frame.hi - frame.lo)            # and exactly
    assert frame.lo.tolist() == [-H] * 3 and np.all(frame.hi - H <= 0.01)
    assert "max x 50000 -> 50000.0078 (+0.00781 m)" in frame.change(*BOX)
    # a corner that is not a float32 number moves out to one
    lo, hi, cell = axis_frame(0.1, 1000.0, 1)
    assert lo <= 0.1 and hi >= 1000.0 and np.float32(lo) == lo and cell == hi - lo


def test_the_cli_reports_a_moved_box(tmp_path, capsys):
    out = tmp_path / "a.rgn"
    assert main(["build", "--asteroids", "4", "--seed", "2", "--dims", "6", "6", "6",
                 "--coverage-samples", "0", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "box widened by at most 0.0078 m so that whole float32 cells" in text
    mesh = regn.load(out)
    assert np.array_equal(np.asarray(mesh.cell_size, np.float64) * 6,
                          np.asarray(mesh.bbox_max) - np.asarray(mesh.bbox_min))


# --------------------------------------------------------------------------- --from-mesh

def _gmsh_box_minus_spheres(path, size):
    """A gmsh tetrahedral mesh of a 100 km box minus 5 balls."""
    import gmsh
    gmsh.initialize()
    try:
        gmsh.option.setNumber("General.Terminal", 0)
        gmsh.model.add("box-minus-5")
        box = gmsh.model.occ.addBox(-H, -H, -H, 2 * H, 2 * H, 2 * H)
        rng = np.random.default_rng(3)
        balls = [(3, gmsh.model.occ.addSphere(*rng.uniform(-0.6 * H, 0.6 * H, 3),
                                              rng.uniform(0.1 * H, 0.2 * H)))
                 for _ in range(5)]
        gmsh.model.occ.cut([(3, box)], balls)
        gmsh.model.occ.synchronize()
        gmsh.option.setNumber("Mesh.MeshSizeMax", size)
        gmsh.model.mesh.generate(3)
        gmsh.write(str(path))
    finally:
        gmsh.finalize()


def test_a_gmsh_mesh_over_the_default_grid_builds_with_chosen_dims(tmp_path, capsys):
    msh = tmp_path / "box-minus-5.msh"
    _gmsh_box_minus_spheres(msh, 6000.0)
    out = tmp_path / "g.rgn"
    rc = main(["build", "--from-mesh", str(msh), "-o", str(out), "--dims", "10", "10", "10"])
    err = capsys.readouterr().err
    assert rc == 2 and "cell references" in err and "--detail" not in err
    hint = re.search(r"--dims (\d+ \d+ \d+) fits", err)[1]
    assert main(["build", "--from-mesh", str(msh), "-o", str(out), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    mesh = regn.load(out)
    assert rep["dims_chosen"] and mesh.dims != (10, 10, 10) and list(mesh.dims) == \
        [int(x) for x in hint.split()]
    assert 15_000 < mesh.n_tets and _fits(mesh) and rep["pinch_edges"] == 0
    assert regn.verify(mesh, strict=True).ok


def test_from_mesh_refuses_options_of_the_obstacle_modes(tmp_path, capsys):
    rc = main(["build", "--from-mesh", "m.msh", "--detail", "2", "-o", str(tmp_path / "x")])
    assert rc == 2 and "--detail does not apply with --from-mesh" in capsys.readouterr().err


# --------------------------------------------------------------------------- valid or refused

def _write_vtu(path, points, tets):
    import meshio
    meshio.write(path, meshio.Mesh(np.asarray(points, float), [("tetra", np.asarray(tets))]))


def _cube(n=1):
    """A cube's 8 corners and 6 positively oriented tetrahedra (scaled by n)."""
    pts = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], float) * n
    tets = np.array([[0, 1, 3, 7], [0, 1, 5, 7], [0, 2, 3, 7], [0, 2, 6, 7],
                     [0, 4, 5, 7], [0, 4, 6, 7]])
    return pts, tets


@pytest.mark.parametrize("bad_index", [-1, 10 ** 6])
def test_from_mesh_refuses_an_index_out_of_range(tmp_path, capsys, bad_index):
    pts, tets = _cube(1000)
    pts = np.vstack([pts, np.random.default_rng(0).uniform(0, 1000, (6, 3))])   # 14 points
    tets = tets.copy()
    tets[3, 2] = bad_index
    vtu = tmp_path / "bad.vtu"
    _write_vtu(vtu, pts, tets)
    out = tmp_path / "bad.rgn"
    assert main(["build", "--from-mesh", str(vtu), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"tetrahedron 3 lists vertex {bad_index}: vertex indices must be in 0..13" in err
    assert not out.exists()


def test_overlapping_tetrahedra_are_refused(tmp_path, capsys):
    pts, tets = _cube(1000)
    corner = np.array([[0, 1, 2, 4]])                 # inside the cube, sharing no face
    with pytest.raises(BuildError, match=r"add up to 116.7 % of the box's: some of them overlap"):
        regn.build(pts, np.vstack([tets, corner]))
    # overlapping but within the box's volume: found pair by pair (both on the
    # same side of the face they share)
    with pytest.raises(BuildError, match=r"1 pairs of tetrahedra overlap.*tetrahedra 0 and 1"):
        regn.build(pts, np.array([[0, 1, 3, 7], [0, 1, 3, 6]]))
    vtu = tmp_path / "overlap.vtu"
    _write_vtu(vtu, pts, np.vstack([tets, corner]))
    out = tmp_path / "t.rgn"
    assert main(["build", "--from-mesh", str(vtu), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "overlap" in err and err.count("\n") == 1 and not out.exists()


@pytest.mark.parametrize("argv_tail,message", [
    (["--box", "0", "0", "0", "1e308", "1e308", "1e308"], "too large for the format's float32"),
    (["--asteroids", "5", "--half-extent", "1e308"], "too large for the format's float32"),
    (["--asteroids", "5", "--agent-radius", "1e308"], "agent_radius (--agent-radius) must be in 0..173205"),
    (["--asteroids", "5", "--coverage-samples", "99999999999999"],
     "coverage samples must be a whole number in 0..100000000"),
    (["--asteroids", "5", "--seed", "-1"], "seed must be an integer >= 0, got -1"),
    (["--asteroids", "-3"], "--asteroids must be in 0..65535"),
    (["--asteroids", "5", "--detail", "0"], "detail must be > 0"),
    (["--asteroids", "5", "--dims", "0", "1", "1"], "grid dims must be three positive"),
    (["--asteroids", "5", "--half-extent", "9", "--box", "0", "0", "0", "9", "9", "9"],
     "give --half-extent or --box, not both"),
])
def test_out_of_range_build_options_are_one_line(tmp_path, capsys, argv_tail, message):
    out = tmp_path / "x.rgn"
    assert main(["build", *argv_tail, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err
    assert not out.exists()


def test_huge_coordinates_from_a_mesh_are_refused(tmp_path, capsys):
    pts, tets = _cube(1000)
    vtu = tmp_path / "huge.vtu"
    _write_vtu(vtu, pts * 1e300, tets)
    out = tmp_path / "h.rgn"
    assert main(["build", "--from-mesh", str(vtu), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "is not finite in float32" in err and err.count("\n") == 1
    assert not out.exists()


# --------------------------------------------------------------------------- --json

@pytest.fixture(scope="module")
def tiny_map(tmp_path_factory):
    from conftest import random_map
    path = tmp_path_factory.mktemp("json") / "tiny.rgn"
    regn.save(random_map(60, seed=4, dims=(2, 2, 2)), path)
    return str(path)


@pytest.mark.parametrize("argv", [
    ["build", "--asteroids", "3", "--dims", "100", "100", "100", "-o", "{tmp}/x.rgn"],
    ["build", "--asteroids", "--json", "-o", "{tmp}/x.rgn"],            # a usage error
    ["info", "{tmp}/missing.rgn"],
    ["dump", "{tmp}/missing.rgn"],
    ["verify", "{tmp}/missing.rgn"],
    ["diff", "{map}", "{tmp}/missing.rgn"],
    ["locate", "{tmp}/missing.rgn"],
    ["nearest", "{tmp}/missing.rgn"],
    ["path", "{map}", "0", "0", "0", "1", "1"],                          # a usage error
    ["path", "{tmp}/missing.rgn", "0", "0", "0", "1", "1", "1"],
    ["raycast", "{tmp}/missing.rgn", "0", "0", "0", "1", "1", "1"],
    ["raycasts", "{tmp}/missing.rgn"],
    ["clearance", "{tmp}/missing.rgn"],
    ["scan", "{tmp}/missing.bin"],
    ["chunk", "{tmp}/missing.bin"],
])
def test_json_failures_print_one_json_object(tmp_path, capsys, tiny_map, argv, monkeypatch):
    import io
    monkeypatch.setattr("sys.stdin", io.StringIO("0 0 0\n"))
    argv = [a.format(tmp=tmp_path, map=tiny_map) for a in argv]
    if "--json" not in argv:
        argv.append("--json")
    try:
        rc = main(argv)
    except SystemExit as e:                  # argparse's usage errors
        rc = e.code
    out = capsys.readouterr().out
    assert rc == 2
    body = json.loads(out)
    assert isinstance(body, dict) and out.count("\n") == 1
    assert body.get("error") or any(f.get("error") for f in body.get("files", []))


def test_asteroids_in_a_custom_box_are_spread_through_that_box(tmp_path):
    """--asteroids N --box ...: the rocks fill the box given (a long slab far
    from the origin here), not the default cube around the origin."""
    lo, hi = np.array([100_000.0, -20_000.0, 0.0]), np.array([300_000.0, 20_000.0, 10_000.0])
    out = tmp_path / "slab.rgn"
    assert main(["build", "--asteroids", "40", "--seed", "3", "--box",
                 *map(str, lo), *map(str, hi), "-o", str(out)]) == 0
    field = random_asteroid_field(40, seed=3, half_extent=(hi - lo) / 2, centre=(lo + hi) / 2)
    c = np.array([s.centre for s in field])
    assert ((c >= lo) & (c <= hi)).all()
    # spread along the long axis, not bunched in one corner of it
    assert np.ptp(c[:, 0]) > 0.5 * (hi - lo)[0]
    # the written mesh has holes where the rocks are: points at rock centres
    # lying inside the box are outside the navigable volume
    mesh = regn.load(out)
    inside = c[((c > lo) & (c < hi)).all(axis=1)]
    assert len(inside) > 10
    assert (mesh.locate(inside) < 0).all()


def test_a_small_box_gets_a_grid_that_sorts_its_tetrahedra():
    """A 100 x 60 x 20 m hall: cells of about 10 m (its longest side over 10),
    not one 10 km cell listing every tetrahedron; a point's cell lists far
    fewer tetrahedra than the mesh has."""
    mesh = generate(((0, 0, 0), (100, 60, 20)), [Sphere((50, 30, 10), 5.0)], seed=1,
                    coverage_samples=0)
    assert mesh.dims[0] == 10 and mesh.dims[1] == 6 and mesh.dims[2] == 2
    assert _fits(mesh)
    assert mesh.n_refs / mesh.n_cells < mesh.n_tets / 4
