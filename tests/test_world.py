"""Navigation meshes from obstacles: exact tests, clearance, coverage, limits, CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

import regn
from regn.builder.from_meshio import from_mesh_file
from regn.builder.generate import DEMO_DIMS, demo_field, generate
from regn.builder.obstacles import Sphere, TriangleMesh, random_asteroid_field
from regn.builder.world import (clearance_violations, free_volume_coverage,
                                tetrahedralize_free_space)
from regn.geometry.distance import point_tet_distance, tets_intersect_balls
from regn.geometry.graph import tet_components
from regn.inputs.obstacles import load_obstacle_mesh, load_spheres
from regn.errors import BuildError, LimitError, RegnError


def _random_tets(rng, n, scale=1.0):
    tp = rng.normal(size=(n, 4, 3)) * scale
    vol = np.einsum("ij,ij->i", np.cross(tp[:, 1] - tp[:, 0], tp[:, 2] - tp[:, 0]),
                    tp[:, 3] - tp[:, 0])
    return tp[np.abs(vol) > 0.05 * scale ** 3]


def _dense_samples(tp, n, rng):
    """(T, n + 4 + 6*k, 3) points of each tetrahedron: random barycentric samples
    plus its vertices and points along its edges."""
    w = rng.dirichlet(np.ones(4) * 0.3, size=n)                      # favours the boundary
    inside = np.einsum("kj,tjd->tkd", w, tp)
    s = np.linspace(0, 1, 41)[:, None]
    edges = [tp[:, i, None] * (1 - s) + tp[:, j, None] * s
             for i, j in ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3))]
    return np.concatenate([inside, tp] + edges, axis=1)


def _sample_in_tets(vertices, tets, n, rng):
    tp = np.asarray(vertices)[np.asarray(tets)]
    w = rng.dirichlet(np.ones(4) * 0.5, size=(len(tp), n))
    return np.einsum("tkj,tjd->tkd", w, tp).reshape(-1, 3)


def _components(mesh):
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components
    nb = np.asarray(mesh.neighbors)
    a = np.repeat(np.arange(len(nb)), 4)
    b = nb.ravel()
    ok = b >= 0
    g = coo_matrix((np.ones(int(ok.sum())), (a[ok], b[ok])), shape=(len(nb), len(nb)))
    return connected_components(g, directed=False)[0]


def _verify_ok(mesh):
    try:
        from regn.checks import verify
    except ImportError:         # another engineer's module, maybe not there yet
        return
    assert verify(mesh, strict=True).ok


# --------------------------------------------------------------------------- exact tests

def test_tet_sphere_test_is_exact_against_dense_sampling():
    rng = np.random.default_rng(3)
    tp = _random_tets(rng, 60)
    centres = rng.normal(size=(len(tp), 3)) * 2.0
    exact = np.array([point_tet_distance(c[None], t[None])[0] for c, t in zip(centres, tp)])
    pts = _dense_samples(tp, 4000, rng)
    sampled = np.linalg.norm(pts - centres[:, None], axis=2).min(axis=1)
    # the exact distance is a lower bound of every sample, and the samples get close
    assert np.all(exact <= sampled + 1e-12)
    size = np.linalg.norm(tp.max(axis=1) - tp.min(axis=1), axis=1)
    assert np.all(sampled - exact <= 0.03 * size)
    # a centre inside the tetrahedron is at distance 0
    inside = tp.mean(axis=1)
    assert np.all(point_tet_distance(inside, tp) == 0)
    # the predicate flips exactly at the exact distance
    for c, t, d in zip(centres, tp, exact):
        if d > 0:
            assert tets_intersect_balls(t[None], c[None], [d * (1 + 1e-9)])[0]
            assert not tets_intersect_balls(t[None], c[None], [d * (1 - 1e-6)])[0]


def test_triangle_mesh_test_matches_distance_to_a_box():
    """Inflated box (as a closed triangle mesh) vs tets: compare with the exact
    tet/box distance computed by dense sampling (a box distance is analytic)."""
    import trimesh
    box = trimesh.creation.box(extents=(2.0, 2.0, 2.0))
    ob = TriangleMesh(box.vertices, box.faces)
    rng = np.random.default_rng(5)
    tp = _random_tets(rng, 300, scale=0.6) + rng.uniform(-2.5, 2.5, size=(1, 1, 3))
    tp = tp + rng.uniform(-2.5, 2.5, size=(len(tp), 1, 3))
    pts = _dense_samples(tp, 3000, rng)
    q = np.maximum(np.abs(pts) - 1.0, 0.0)
    dist = np.linalg.norm(q, axis=2).min(axis=1)                 # sampled tet/box distance
    for r in (0.0, 0.3):
        hit = ob.inflated(r).tets_intersect(tp)
        assert not np.any(~hit & (dist <= r)), "a tet meeting the inflated box was missed"
        size = np.linalg.norm(tp.max(axis=1) - tp.min(axis=1), axis=1)
        assert not np.any(hit & (dist > r + 0.03 * size)), "a clear tet was flagged"
    # a tet wholly inside the box, and a box wholly inside a tet
    small = np.array([[[0, 0, 0], [0.1, 0, 0], [0, 0.1, 0], [0, 0, 0.1]]], float)
    big = np.array([[[-10, -10, -10], [30, -10, -10], [-10, 30, -10], [-10, -10, 30]]], float)
    assert ob.tets_intersect(small)[0] and ob.tets_intersect(big)[0]


# --------------------------------------------------------------------------- free space

def _check_clearance(vertices, tets, obstacles, r, rng):
    assert clearance_violations(vertices, tets, obstacles, r) == 0
    pts = _sample_in_tets(vertices, tets, 20, rng)
    for ob in obstacles:
        if isinstance(ob, Sphere):
            d = np.linalg.norm(pts - np.array(ob.centre), axis=1)
            assert d.min() > ob.radius + r


@pytest.mark.parametrize("seed,r", [(0, 0.0), (1, 300.0), (2, 1000.0)])
def test_no_tet_meets_an_inflated_obstacle_on_random_fields(seed, r):
    obs = random_asteroid_field(12, seed=seed, half_extent=20_000)
    lo, hi = np.full(3, -20_000.0), np.full(3, 20_000.0)
    v, t, rep = tetrahedralize_free_space(lo, hi, obs, agent_radius=r, seed=seed)
    assert rep["tets"] == len(t) > 0
    _check_clearance(v, t, obs, r, np.random.default_rng(seed))
    assert np.all(v >= lo) and np.all(v <= hi)
    assert np.array_equal(v, v.astype(np.float32).astype(np.float64))
    cov = free_volume_coverage(v, t, lo, hi, obs, r, samples=30_000)
    assert cov["coverage"] >= 0.95 and cov["in_obstacle_hits"] == 0


def test_demo_field_coverage_and_limits():
    bbox, obs = demo_field()
    assert len(obs) == 40 and bbox == ((-50_000.0,) * 3, (50_000.0,) * 3)
    mesh = generate(bbox, obs, dims=DEMO_DIMS, seed=1)
    rep = mesh.build_report
    assert rep["coverage"] >= 0.95
    assert rep["clearance_violations"] == 0 and rep["clearance_ok"]
    assert max(mesh.n_vertices, mesh.n_tets, mesh.n_faces, mesh.n_refs) <= 65_535
    assert 8_000 <= mesh.n_tets <= 20_000
    assert mesh.dims == (10, 10, 10)
    assert set(rep["seconds"]) >= {"sample", "delaunay", "regn_build", "coverage"}
    _verify_ok(mesh)
    # deterministic per seed
    v, t, _ = tetrahedralize_free_space(*bbox, obs, seed=1)
    assert np.array_equal(v, mesh.vertices) and len(t) == mesh.n_tets


def test_asteroid_field_deterministic_and_realistic():
    a = random_asteroid_field(40, seed=1, half_extent=50_000)
    b = random_asteroid_field(40, seed=1, half_extent=50_000)
    c = random_asteroid_field(40, seed=2, half_extent=50_000)
    def arr(f):
        return np.array([[*s.centre, s.radius] for s in f])
    assert np.array_equal(arr(a), arr(b)) and not np.array_equal(arr(a), arr(c))
    radii = np.array([s.radius for s in a])
    assert radii.min() >= 1000 and radii.max() <= 8000
    cen = np.array([s.centre for s in a])
    d = np.linalg.norm(cen[:, None] - cen[None], axis=2) - radii[:, None] - radii[None]
    np.fill_diagonal(d, np.inf)
    assert (d <= 0).any()                       # some touch / overlap


def test_trivial_box_without_obstacles():
    mesh = generate(((0, 0, 0), (1000, 2000, 500)), [], coverage_samples=20_000)
    rep = mesh.build_report
    assert rep["coverage"] == 1.0 and rep["components"] == 1
    assert np.isclose(mesh.tet_volumes.sum(), 1000 * 2000 * 500, rtol=1e-6)
    assert mesh.n_tets < 5000
    _verify_ok(mesh)


def test_obstacle_poking_out_of_the_box():
    lo, hi = np.zeros(3), np.full(3, 10_000.0)
    obs = [Sphere((0, 0, 0), 4000), Sphere((10_000, 5000, 5000), 2500),
           Sphere((5000, 5000, 11_000), 3000)]
    v, t, rep = tetrahedralize_free_space(lo, hi, obs)
    _check_clearance(v, t, obs, 0.0, np.random.default_rng(0))
    assert np.all(v >= lo) and np.all(v <= hi)
    cov = free_volume_coverage(v, t, lo, hi, obs, samples=30_000)
    assert cov["coverage"] >= 0.95


def test_nested_and_touching_spheres():
    lo, hi = np.full(3, -10_000.0), np.full(3, 10_000.0)
    obs = [Sphere((0, 0, 0), 4000), Sphere((500, 0, 0), 1500),          # nested
           Sphere((-6000, 0, 0), 2000), Sphere((0, 6500, 0), 2500)]    # touching
    for r in (0.0, 200.0):
        v, t, _ = tetrahedralize_free_space(lo, hi, obs, agent_radius=r)
        _check_clearance(v, t, obs, r, np.random.default_rng(1))
        cov = free_volume_coverage(v, t, lo, hi, obs, r, samples=30_000)
        assert cov["coverage"] >= 0.95
        assert tet_components(t)[0] == 1


def test_triangle_mesh_box_obstacle(tmp_path):
    import trimesh
    path = tmp_path / "crate.obj"
    trimesh.creation.box(extents=(4000, 3000, 2000)).export(path)
    crate = load_obstacle_mesh(path)
    assert len(crate.triangles) == 12
    lo, hi = np.full(3, -5000.0), np.full(3, 5000.0)
    for r in (0.0, 250.0):
        v, t, _ = tetrahedralize_free_space(lo, hi, [crate], agent_radius=r)
        assert clearance_violations(v, t, [crate], r) == 0
        pts = _sample_in_tets(v, t, 20, np.random.default_rng(2))
        q = np.maximum(np.abs(pts) - np.array([2000, 1500, 1000]), 0)
        assert np.linalg.norm(q, axis=1).min() > r              # outside the inflated crate
        cov = free_volume_coverage(v, t, lo, hi, [crate], r, samples=30_000)
        assert cov["coverage"] >= 0.95


def test_agent_radius_closing_a_gap_splits_the_space():
    # A sphere filling a 10 km square tube except for four corner channels
    # (1.57 km wide along the diagonals); an agent of 2 km cannot pass them.
    bbox = ((-5000, -5000, -20_000), (5000, 5000, 20_000))
    obs = [Sphere((0, 0, 0), 5500)]
    open_ = generate(bbox, obs, coverage_samples=20_000)
    closed = generate(bbox, obs, agent_radius=2000, coverage_samples=20_000)
    assert _components(open_) == 1
    assert _components(closed) == 2 == closed.build_report["components"]
    assert closed.build_report["clearance_ok"]


def test_impossible_budget_is_a_clear_limit_error():
    obs = random_asteroid_field(5, seed=1, half_extent=5000)
    with pytest.raises(LimitError, match=r"at --detail 1000 the mesh needs \d+ vertices.*"
                       r"lower --detail \([\d.]+ fits\), or leave it out"):
        generate(((-5000,) * 3, (5000,) * 3), obs, detail=1000, coverage_samples=0)
    # a grid past the limit is refused before any costly work
    with pytest.raises(LimitError, match="grid 60x60x60 has 216000 grid cells.*--dims"):
        generate(((0, 0, 0), (1000, 1000, 1000)), [], dims=(60, 60, 60), coverage_samples=0)


def test_load_spheres_csv_and_json(tmp_path):
    c = tmp_path / "s.csv"
    c.write_text("x,y,z,radius\n0,0,0,100\n1,2,3,4.5\n")
    j = tmp_path / "s.json"
    j.write_text(json.dumps([{"x": 0, "y": 0, "z": 0, "radius": 100},
                             {"x": 1, "y": 2, "z": 3, "radius": 4.5}]))
    def arr(f):
        return np.array([[*s.centre, s.radius] for s in f])
    want = np.array([[0, 0, 0, 100], [1, 2, 3, 4.5]])
    assert np.array_equal(arr(load_spheres(c)), want)
    assert np.array_equal(arr(load_spheres(j)), want)
    bad = tmp_path / "bad.csv"
    bad.write_text("1,2,3,4\n1,2,x,4\n")
    with pytest.raises(BuildError):
        load_spheres(bad)


def test_from_mesh_file(tmp_path):
    import meshio
    from scipy.spatial import Delaunay
    pts = np.random.default_rng(0).uniform(0, 1000, size=(60, 3))
    pts = np.vstack([pts, [[x, y, z] for x in (0, 1000) for y in (0, 1000) for z in (0, 1000)]])
    tri = Delaunay(pts).simplices
    p = tmp_path / "m.vtu"
    meshio.write(p, meshio.Mesh(pts, [("tetra", tri)]))
    mesh = from_mesh_file(p, dims=(2, 2, 2))
    assert mesh.n_tets == len(tri)
    q = tmp_path / "tri.vtu"
    meshio.write(q, meshio.Mesh(pts[:3], [("triangle", np.array([[0, 1, 2]]))]))
    with pytest.raises(RegnError, match="no tetra"):
        from_mesh_file(q)


# --------------------------------------------------------------------------- CLI

def test_cli_build_writes_a_loadable_file(tmp_path, capsys):
    from regn.cli import main
    spheres = tmp_path / "s.csv"
    spheres.write_text("x,y,z,radius\n0,0,0,3000\n4500,0,0,2000\n")
    out = tmp_path / "a.rgn"
    rc = main(["build", "--box", "-10000", "-10000", "-10000", "10000", "10000", "10000",
               "--spheres", str(spheres), "--agent-radius", "100", "-o", str(out), "--json",
               "--coverage-samples", "20000"])
    assert rc == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["clearance_ok"] and rep["coverage"] >= 0.95
    mesh = regn.loads(out.read_bytes())
    assert mesh.n_tets == rep["tets"]
    _verify_ok(mesh)
    # an existing file is refused without --force
    rc = main(["build", "--asteroids", "5", "--seed", "3", "--half-extent", "20000",
               "-o", str(out)])
    assert rc == 2 and "exists" in capsys.readouterr().err
    rc = main(["build", "--asteroids", "5", "--seed", "3", "--half-extent", "20000",
               "-o", str(out), "--force", "--coverage-samples", "20000"])
    text = capsys.readouterr().out
    assert rc == 0 and "coverage" in text and "clearance check: pass" in text
    # from a tet mesh
    vtu = tmp_path / "m.vtu"
    regn.load(out).to_meshio().write(vtu) if hasattr(regn.load(out), "to_meshio") else None
    if vtu.exists():
        out2 = tmp_path / "b.rgn"
        assert main(["build", "--from-mesh", str(vtu), "-o", str(out2)]) == 0
        assert regn.load(out2).n_tets == regn.load(out).n_tets
    # an impossible budget: one line, exit 2
    capsys.readouterr()
    rc = main(["build", "--asteroids", "5", "--detail", "5000", "-o", str(tmp_path / "c.rgn")])
    err = capsys.readouterr().err
    assert rc == 2 and "lower --detail (" in err and not (tmp_path / "c.rgn").exists()
