"""Exports (meshio volumes, grid, surfaces, arrays) and pictures (PNG, HTML)."""

import json
import os
import sys
import types
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from scipy.spatial import Delaunay

import regn
from regn.cli import main
from regn.errors import ExportError
from regn.export import export
from regn.export.meshio_io import cells_listing, components
from regn.inputs.meshes import read_meshio
from regn.export.surface import boundary_surface, box_wall_mask, signed_volume

H = 50_000.0
HOLES = ((0.0, 0.0, 0.0, 18_000.0), (-25_000.0, 20_000.0, 10_000.0, 12_000.0))


def asteroid_map(seed=0, n=300, holes=HOLES, dims=(10, 10, 10)):
    """A box with spherical asteroids: Delaunay of the box corners, points on
    each sphere and free points outside them; the tetrahedra made only of one
    sphere's points (its inside) are removed, so each hole is a closed
    polyhedron."""
    rng = np.random.default_rng(seed)
    pts = [np.array([[x, y, z] for x in (-H, H) for y in (-H, H) for z in (-H, H)])]
    label = [np.full(8, -1)]
    for h, (cx, cy, cz, r) in enumerate(holes):
        d = rng.normal(size=(60, 3))
        d /= np.linalg.norm(d, axis=1, keepdims=True)
        pts.append(np.array([cx, cy, cz]) + r * d)
        label.append(np.full(60, h))
    free = rng.uniform(-0.95 * H, 0.95 * H, size=(n, 3))
    for cx, cy, cz, r in holes:
        free = free[np.linalg.norm(free - [cx, cy, cz], axis=1) > 1.15 * r]
    pts.append(free)
    label.append(np.full(len(free), -1))
    pts, label = np.concatenate(pts), np.concatenate(label)
    tets = Delaunay(pts).simplices
    lab = label[tets]
    inside = np.all(lab == lab[:, :1], axis=1) & (lab[:, 0] >= 0)
    return regn.build(pts, tets[~inside], bbox=(-H * np.ones(3), H * np.ones(3)), dims=dims)


@pytest.fixture(scope="module")
def amap():
    return asteroid_map()


@pytest.fixture(scope="module")
def two_part_map(amap):
    """The asteroid map cut in two by removing every tet crossing z = 30 km."""
    z = amap.tet_points[:, :, 2]
    keep = ~((z.min(1) < 30_000) & (z.max(1) > 30_000))
    return regn.build(amap.vertices, amap.tets[keep], bbox=(amap.bbox_min, amap.bbox_max),
                      dims=(10, 10, 10))


@pytest.fixture(scope="module")
def rgn_file(amap, tmp_path_factory):
    p = tmp_path_factory.mktemp("maps") / "field.rgn"
    regn.save(amap, p)
    return p


@pytest.fixture
def fake_path(monkeypatch):
    """Install a stand-in regn.query.paths.path when the real one is not there yet."""
    try:
        import regn.query.paths.path  # noqa: F401
        return False
    except ImportError:
        pass
    mod = types.ModuleType("regn.query.paths.path")

    def find_path(mesh, start, goal, smooth=True, cost_scale=None, exclude=None):
        a, b = np.asarray(start, float), np.asarray(goal, float)
        pts = np.stack([a, (a + b) / 2 + [30_000.0, 0, 0], b])
        return types.SimpleNamespace(found=True, points=pts,
                                     corridor=np.flatnonzero(
                                         np.linalg.norm(mesh.tet_centres - pts[1], axis=1) < 15e3))
    mod.find_path = find_path
    monkeypatch.setitem(sys.modules, "regn.query.paths.path", mod)
    return True


# --- components / per-tet data --------------------------------------------------
def _flood_labels(neighbors):
    """Components by flood fill, numbered in order of their first tetrahedron."""
    labels = [-1] * len(neighbors)
    n = 0
    for start in range(len(neighbors)):
        if labels[start] >= 0:
            continue
        labels[start] = n
        todo = [start]
        while todo:
            t = todo.pop()
            for u in neighbors[t]:
                if u >= 0 and labels[u] < 0:
                    labels[u] = n
                    todo.append(u)
        n += 1
    return np.array(labels)


def test_components_match_flood_fill_and_split(amap, two_part_map):
    assert np.all(components(amap) == 0)
    lab = components(two_part_map)
    assert lab.max() == 1
    # no face joins two components
    nb = two_part_map.neighbors
    t, k = np.nonzero(nb >= 0)
    assert np.all(lab[t] == lab[nb[t, k]])
    assert np.array_equal(lab, _flood_labels(nb.tolist()))
    assert np.array_equal(np.unique(components(two_part_map)), [0, 1])


def test_cells_listing_sums_to_refs(amap):
    cl = cells_listing(amap)
    assert cl.sum() == amap.n_refs and cl.min() >= 1


def test_mesh_methods(amap):
    m = amap.to_meshio()
    assert m.cells[0].type == "tetra" and len(m.cells[0].data) == amap.n_tets
    v, tri = amap.boundary_surface()
    assert len(tri) == len(amap.boundary_faces) and len(v) == len(np.unique(tri))


# --- volume exports ---------------------------------------------------------------
@pytest.mark.parametrize("ext", [".vtu", ".vtk", ".msh", ".mesh"])
def test_volume_round_trip_meshio(amap, tmp_path, ext):
    import meshio
    out = tmp_path / f"field{ext}"
    assert export(amap, out) == "volume"
    m = meshio.read(out)
    tets = np.concatenate([c.data for c in m.cells if c.type == "tetra"])
    assert len(tets) == amap.n_tets and len(m.points) == amap.n_vertices
    assert np.allclose(m.points, amap.vertices)
    assert np.array_equal(tets, amap.tets)
    if ext != ".mesh":   # medit keeps one integer per cell (the component)
        vol = m.cell_data["volume"][0]
        assert np.isclose(vol.sum(), amap.tet_volumes.sum(), rtol=1e-12)
        assert np.array_equal(m.cell_data["cells_listing"][0].astype(int), cells_listing(amap))
        assert np.all(m.cell_data["component"][0] == 0)
    # the round trip through regn.build gives the same tetrahedra
    back = regn.from_meshio(m, bbox=(amap.bbox_min, amap.bbox_max), dims=amap.dims)
    assert back.n_tets == amap.n_tets
    assert np.isclose(back.tet_volumes.sum(), amap.tet_volumes.sum(), rtol=1e-6)


def _xdmf_arrays(path):
    root = ET.parse(path).getroot()
    grid = root.find("Domain/Grid")

    def item(el):
        d = el.find("DataItem")
        shape = tuple(int(s) for s in d.get("Dimensions").split())
        return np.array(d.text.split(), dtype=float).reshape(shape)
    attrs = {a.get("Name"): item(a) for a in grid.findall("Attribute")}
    return item(grid.find("Geometry")), grid.find("Topology").get("TopologyType"), \
        item(grid.find("Topology")), attrs


def test_volume_xdmf_is_one_xml_file(amap, tmp_path):
    out = tmp_path / "field.xdmf"
    export(amap, out)
    assert sorted(os.listdir(tmp_path)) == ["field.xdmf"]     # no .h5, no temp left
    pts, kind, tets, attrs = _xdmf_arrays(out)
    assert kind == "Tetrahedron" and np.array_equal(tets.astype(int), amap.tets)
    assert np.allclose(pts, amap.vertices)
    assert np.isclose(attrs["volume"].sum(), amap.tet_volumes.sum(), rtol=1e-12)
    # read back by regn itself: meshio's reader needs h5py even for inline XML
    # and rejects the <Time> element pyvista needs (test_export_readback.py)
    assert np.array_equal(read_meshio(out).cells[0].data, amap.tets)


@pytest.mark.parametrize("how", ["flag", "name"])
def test_grid_export(amap, tmp_path, how):
    import meshio
    out = tmp_path / ("cells.vtu" if how == "flag" else "cells.grid.vtu")
    assert export(amap, out, grid=True if how == "flag" else None) == "grid"
    m = meshio.read(out)
    (block,) = m.cells
    assert block.type == "hexahedron" and len(block.data) == amap.n_cells
    refs = m.cell_data["ref_count"][0]
    assert np.array_equal(refs, amap.cell_ref_count) and refs.sum() == amap.n_refs
    # each hexahedron is its cell's box, in linear cell order
    from regn.geometry import cell_bounds
    lo, hi = cell_bounds(np.arange(amap.n_cells), amap.bbox_min, amap.cell_size, amap.dims)
    corners = m.points[block.data]
    assert np.allclose(corners.min(axis=1), lo) and np.allclose(corners.max(axis=1), hi)


# --- surfaces ----------------------------------------------------------------------
def test_boundary_surface_closed_and_outward(amap):
    import trimesh
    v, tri = boundary_surface(amap)
    tm = trimesh.Trimesh(v, tri, process=False)
    assert tm.is_watertight and tm.is_winding_consistent
    nav = amap.tet_volumes.sum()
    # outward from the navigable volume: the enclosed signed volume is +nav
    assert np.isclose(tm.volume, nav, rtol=1e-9)
    assert np.isclose(signed_volume(v, tri), nav, rtol=1e-9)
    # the box walls' triangles point out of the box
    wall = box_wall_mask(amap, v, tri)
    p = v[tri[wall]]
    n = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    assert np.all(np.einsum("ij,ij->i", n, p.mean(axis=1)) > 0)
    # the asteroid triangles point into the asteroids: each asteroid's surface
    # encloses a negative volume, and together they are -(box - navigable)
    holes = tri[~wall]
    c = v[holes].mean(axis=1)
    centre = np.array([h[:3] for h in HOLES])
    which = np.argmin(np.linalg.norm(c[:, None] - centre[None], axis=2), axis=1)
    box = float(np.prod(amap.bbox_max - amap.bbox_min))
    assert np.isclose(signed_volume(v, holes), nav - box, rtol=1e-9)
    for h, (_, _, _, r) in enumerate(HOLES):
        vol = signed_volume(v, holes[which == h])
        assert -4 / 3 * np.pi * r ** 3 < vol < -0.5 * 4 / 3 * np.pi * r ** 3


def test_signed_volume_holds_on_a_ragged_map():
    from conftest import random_map
    m = random_map(200, seed=3, hole_fraction=0.2)
    v, tri = boundary_surface(m)
    assert np.isclose(signed_volume(v, tri), m.tet_volumes.sum(), rtol=1e-9)


@pytest.mark.parametrize("ext", [".obj", ".ply", ".stl"])
def test_surface_files_read_back(amap, tmp_path, ext):
    import trimesh
    out = tmp_path / f"surf{ext}"
    assert export(amap, out) == "surface"
    v, tri = boundary_surface(amap)
    tm = trimesh.load(out, process=(ext == ".stl"))   # STL stores corners: merge them
    assert len(tm.faces) == len(tri)
    assert tm.is_watertight
    assert np.isclose(tm.volume, amap.tet_volumes.sum(), rtol=1e-6)


# --- arrays ---------------------------------------------------------------------
def test_npz_and_json(amap, tmp_path):
    export(amap, tmp_path / "a.npz")
    export(amap, tmp_path / "a.json")
    z = np.load(tmp_path / "a.npz")
    d = json.loads((tmp_path / "a.json").read_text())
    assert set(z.files) == set(d["arrays"])
    for name in ("vertices", "tets", "neighbors", "portal_costs", "cell_ref_count",
                 "ref_tet", "component", "cells_listing", "grid_indices"):
        assert name in z.files
        assert np.array_equal(z[name], np.asarray(getattr(amap, name))
                              if hasattr(amap, name) and not callable(getattr(amap, name))
                              else z[name])
        assert np.allclose(np.asarray(d["arrays"][name], dtype=float), z[name])
    assert d["header"]["counts"]["tets"] == amap.n_tets
    assert d["header"]["fields"]["dims"][:3] == list(amap.dims)


# --- errors and atomicity -------------------------------------------------------------
def test_unknown_extension_and_bad_directory(amap, tmp_path):
    with pytest.raises(ExportError, match="unknown extension .foo"):
        export(amap, tmp_path / "x.foo")
    with pytest.raises(ExportError, match="does not exist"):
        export(amap, tmp_path / "nope" / "x.vtu")
    with pytest.raises(ExportError, match="grid can only"):
        export(amap, tmp_path / "x.obj", grid=True)
    assert os.listdir(tmp_path) == []


def test_failed_write_leaves_old_file(amap, tmp_path, monkeypatch):
    import meshio
    out = tmp_path / "keep.vtu"
    out.write_bytes(b"old")

    def boom(*a, **k):
        raise RuntimeError("disk on fire")
    monkeypatch.setattr(meshio, "write", boom)
    with pytest.raises(ExportError, match="disk on fire"):
        export(amap, out)
    assert out.read_bytes() == b"old" and os.listdir(tmp_path) == ["keep.vtu"]


@pytest.mark.parametrize("argv_tail, msg", [
    (["out.xyz"], "unknown extension .xyz"),
    (["missing_dir/out.vtu"], "does not exist"),
    (["out.stl", "--grid"], "grid can only"),
])
def test_cli_export_errors_one_line(rgn_file, tmp_path, capsys, argv_tail, msg):
    argv_tail = [str(tmp_path / argv_tail[0])] + argv_tail[1:]
    assert main(["export", str(rgn_file)] + argv_tail) == 2
    err = capsys.readouterr().err
    assert err.startswith("regn: ") and msg in err and err.count("\n") == 1


def test_cli_render_view_errors_one_line(rgn_file, tmp_path, capsys):
    cases = [(["render", str(rgn_file), "-o", str(tmp_path / "a.jpg")], ".png"),
             (["render", str(rgn_file), "-o", str(tmp_path / "no" / "a.png")], "does not exist"),
             (["render", str(rgn_file), "-o", str(tmp_path / "a.png"), "--slice", "w=3"],
              "AXIS=VALUE"),
             (["render", str(rgn_file), "-o", str(tmp_path / "a.png"), "--size", "big"],
              "WIDTHxHEIGHT"),
             (["view", str(rgn_file), "-o", str(tmp_path / "a.htm1")], ".html")]
    for argv, msg in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert msg in err and err.count("\n") == 1, (argv, err)


def test_cli_export_writes(rgn_file, tmp_path, capsys):
    out = tmp_path / "f.vtu"
    assert main(["export", str(rgn_file), str(out)]) == 0
    assert "volume" in capsys.readouterr().out and out.stat().st_size > 0


# --- pictures ----------------------------------------------------------------------
def _png(path):
    import matplotlib.image as mpimg
    return mpimg.imread(path)


def _not_blank(img):
    rgb = img[..., :3].reshape(-1, 3)
    return float(rgb.std()) > 0.05 and len(np.unique((rgb * 255).astype(int), axis=0)) > 20


@pytest.mark.parametrize("view, size", [("all", (1000, 750)), ("3d", (500, 400)),
                                        ("grid", (640, 480)), ("slice", (600, 600))])
def test_render_png(rgn_file, tmp_path, capsys, view, size):
    out = tmp_path / f"{view}.png"
    argv = ["render", str(rgn_file), "-o", str(out), "--view", view,
            "--size", f"{size[0]}x{size[1]}"]
    if view == "slice":
        argv += ["--slice", "x=-5km"]
    assert main(argv) == 0
    img = _png(out)
    assert img.shape[:2] == (size[1], size[0])
    assert _not_blank(img)


def test_cross_section_areas(amap):
    """The cut polygons tile the plane's navigable part: their total area is
    the area enclosed by the boundary surface's section (box minus the
    asteroids' cuts, by Green's theorem), and the polygons do not overlap."""
    from regn.export.render import cross_section
    cut, polys = cross_section(amap.tet_points, 2, 1234.0)
    assert len(cut) and all(len(p) in (3, 4) for p in polys)

    def shoelace(p):
        x, y = p[:, 0], p[:, 1]
        return 0.5 * (x * np.roll(y, -1) - np.roll(x, -1) * y).sum()
    signed = np.array([shoelace(p) for p in polys])
    assert np.all(signed > 0)            # vertices in counter-clockwise order
    # independent: Green's theorem on the surface's cut with the plane, each
    # segment oriented so its triangle's outward normal is on its right
    v, tri = boundary_surface(amap)
    p = v[tri]
    d = p[:, :, 2] - 1234.0
    crossing = (d.min(axis=1) < 0) & (d.max(axis=1) > 0)
    green = 0.0
    for P, D in zip(p[crossing], d[crossing]):
        ends = [P[i] + (P[j] - P[i]) * D[i] / (D[i] - D[j])
                for i, j in ((0, 1), (1, 2), (2, 0)) if D[i] * D[j] < 0]
        a, b = ends[0][:2], ends[1][:2]
        n = np.cross(P[1] - P[0], P[2] - P[0])[:2]
        t = b - a
        if np.dot([t[1], -t[0]], n) < 0:
            a, b = b, a
        green += 0.5 * (a[0] * b[1] - b[0] * a[1])
    assert np.isclose(signed.sum(), green, rtol=1e-6)
    assert signed.sum() < (2 * H) ** 2


def test_render_slice_components_and_overlays(two_part_map, tmp_path, fake_path):
    from regn.export.render import render
    out = tmp_path / "two.png"
    render(two_part_map, out, view="slice", slice=("y", 0.0), size=(700, 600),
           path=((0, -30_000, -20_000), (0, 30_000, -20_000)),
           points=two_part_map.vertices[::7])
    img = _png(out)
    assert img.shape[:2] == (600, 700) and _not_blank(img)


def test_render_points_file(rgn_file, amap, tmp_path):
    pts = tmp_path / "pts.txt"
    pts.write_text("\n".join(f"{x} {y} {z}" for x, y, z in amap.vertices[::9]))
    out = tmp_path / "pts.png"
    assert main(["render", str(rgn_file), "-o", str(out), "--view", "grid",
                 "--points", str(pts), "--size", "400x300"]) == 0
    assert _png(out).shape[:2] == (300, 400)


def test_cli_render_and_view_with_path(amap, rgn_file, tmp_path, fake_path, capsys):
    out = tmp_path / "route.png"
    assert main(["render", str(rgn_file), "-o", str(out), "--view", "grid", "--size",
                 "500x400", "--path", "0", "-40000", "-30000", "0", "40000", "-30000"]) == 0
    assert _png(out).shape[:2] == (400, 500)
    html = tmp_path / "route.html"
    assert main(["view", str(rgn_file), "-o", str(html), "--path", "0", "-40000",
                 "-30000", "0", "40000", "-30000"]) == 0
    assert '"name":"path"' in html.read_text().replace(" ", "")
    found = amap.find_path((0, -40000, -30000), (0, 40000, -30000))
    said = f"path {found.length / 1000:.1f} km, {len(found.points)} points"
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith(f"bytes; {said}") and lines[1].endswith(f"bytes; {said}")
    # a path that cannot be found is said, and the picture drawn without it
    assert main(["render", str(rgn_file), "-o", str(out), "--force", "--view", "grid",
                 "--path", "0", "0", "9e9", "0", "40000", "-30000"]) == 0
    assert capsys.readouterr().out.rstrip().endswith("bytes; no path (start_outside)")


def test_render_and_view_take_a_computed_path(amap, tmp_path):
    """A path result (points, tets, found) can be drawn without the query module."""
    from regn.export.render import render
    from regn.export.view import write_html
    res = types.SimpleNamespace(found=True, status="ok", tets=np.arange(0, amap.n_tets, 50),
                                points=np.array([[0, -40e3, 30e3], [20e3, 0, 30e3],
                                                 [0, 40e3, 30e3]]))
    render(amap, tmp_path / "r.png", view="3d", path=res, size=(400, 400))
    assert _png(tmp_path / "r.png").shape[:2] == (400, 400)
    write_html(amap, tmp_path / "r.html", path=res)
    assert '"name":"path"' in (tmp_path / "r.html").read_text().replace(" ", "")
    lost = types.SimpleNamespace(found=False, status="unreachable", tets=[], points=np.zeros((0, 3)))
    from regn.export.render import figure
    assert "no path (unreachable)" in figure(amap, view="grid", path=lost)._suptitle.get_text()
