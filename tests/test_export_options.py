"""``regn export``'s surface groups (per asteroid, per box wall) and units, its
refusal to overwrite, and ``regn render``'s refusal of a slice that cuts
nothing."""

import numpy as np
import pytest

import regn
from regn.cli import main
from regn.errors import ExportError
from regn.export import export
from regn.export.surface import WALL_NAMES, boundary_surface, signed_volume, surface_groups
from test_export import HOLES, asteroid_map


@pytest.fixture(scope="module")
def amap():
    return asteroid_map()


@pytest.fixture(scope="module")
def rgn_file(amap, tmp_path_factory):
    p = tmp_path_factory.mktemp("maps") / "field.rgn"
    regn.save(amap, p)
    return p


def test_groups_are_the_asteroids_and_the_walls(amap):
    v, tri = boundary_surface(amap)
    labels, names = surface_groups(amap, v, tri)
    assert names[:6] == list(WALL_NAMES) and names[6:] == ["asteroid_001", "asteroid_002"]
    lo, hi = amap.bbox_min, amap.bbox_max
    for k, name in enumerate(WALL_NAMES):        # each wall's triangles lie on its plane
        axis, side = divmod(k, 2)
        plane = (lo, hi)[side][axis]
        p = v[tri[labels == k]]
        assert len(p) and np.all(p[:, :, axis] == plane), name
    # each asteroid group surrounds one sphere, the largest first, and is closed
    # with its normals pointing into the rock (negative enclosed volume)
    for g, (cx, cy, cz, r) in zip((6, 7), sorted(HOLES, key=lambda h: -h[3])):
        piece = tri[labels == g]
        d = np.linalg.norm(v[piece].mean(axis=1) - [cx, cy, cz], axis=1)
        assert np.all(np.abs(d - r) < 0.3 * r)
        assert -4 / 3 * np.pi * r ** 3 < signed_volume(v, piece) < 0
        edges = np.sort(piece[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2), axis=1)
        _, count = np.unique(edges, axis=0, return_counts=True)
        assert np.all(count == 2)                  # watertight on its own


def _obj_groups(path):
    """{name: (faces (F,3) 0-based)} from the 'o'/'g' sections, and vertices."""
    verts, groups, current = [], {}, None
    for line in path.read_text().splitlines():
        word, *rest = line.split() or [""]
        if word == "v":
            verts.append([float(x) for x in rest])
        elif word in ("o", "g"):
            assert current in (None, rest[0]) or word == "o"
            current = rest[0]
            groups.setdefault(current, [])
        elif word == "f":
            groups[current].append([int(x) - 1 for x in rest])
    return np.array(verts), {k: np.array(f) for k, f in groups.items()}


def test_grouped_obj_in_km(rgn_file, amap, tmp_path):
    import trimesh
    out = tmp_path / "rocks.obj"
    assert main(["export", str(rgn_file), str(out), "--groups", "--units", "km"]) == 0
    text = out.read_text()
    assert "# units: km" in text and "# groups: 2 asteroids, 6 box walls" in text
    verts, groups = _obj_groups(out)
    v, tri = boundary_surface(amap)
    labels, names = surface_groups(amap, v, tri)
    np.testing.assert_allclose(verts, v / 1000, rtol=1e-15)
    assert list(groups) == names
    for k, name in enumerate(names):
        np.testing.assert_array_equal(groups[name], tri[labels == k])
    # a user's loader splits on them: one object per group
    scene = trimesh.load_scene(out, split_objects=True, group_material=False, process=False)
    assert sorted(scene.geometry) == sorted(names)
    rock = scene.geometry["asteroid_001"]
    assert rock.is_watertight and np.all(np.abs(rock.vertices) <= 50.0)


def test_grouped_ply_and_vtu(rgn_file, amap, tmp_path):
    import meshio
    import trimesh
    v, tri = boundary_surface(amap)
    labels, names = surface_groups(amap, v, tri)
    ply = tmp_path / "rocks.ply"
    assert main(["export", str(rgn_file), str(ply), "--groups"]) == 0
    tm = trimesh.load(ply, process=False)
    np.testing.assert_array_equal(tm.metadata["_ply_raw"]["face"]["data"]["group"], labels)
    header = ply.read_bytes().split(b"end_header")[0].decode()
    for k, name in enumerate(names):
        assert f"comment group {k} {name}" in header
    vtu = tmp_path / "rocks.vtu"
    assert main(["export", str(rgn_file), str(vtu), "--surface", "--groups",
                 "--units", "km"]) == 0
    m = meshio.read(vtu)
    assert [c.type for c in m.cells] == ["triangle"]
    np.testing.assert_array_equal(m.cells[0].data, tri)
    np.testing.assert_array_equal(m.cell_data["group"][0], labels)
    np.testing.assert_allclose(m.points, v / 1000, rtol=1e-15)


def test_group_and_unit_refusals(amap, tmp_path):
    with pytest.raises(ExportError, match="STL has no groups"):
        export(amap, tmp_path / "x.stl", groups=True)
    with pytest.raises(ExportError, match="apply to the boundary surface"):
        export(amap, tmp_path / "x.vtu", units="km")
    with pytest.raises(ExportError, match="surface is written as"):
        export(amap, tmp_path / "x.msh", surface=True)
    with pytest.raises(ExportError, match="unknown units"):
        export(amap, tmp_path / "x.obj", units="ft")
    assert list(tmp_path.iterdir()) == []


def test_export_refuses_to_overwrite(rgn_file, tmp_path, capsys):
    out = tmp_path / "s.obj"
    assert main(["export", str(rgn_file), str(out)]) == 0
    first = out.read_bytes()
    capsys.readouterr()
    assert main(["export", str(rgn_file), str(out), "--units", "km"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("regn: ") and "exists; pass --force" in err and err.count("\n") == 1
    assert out.read_bytes() == first
    assert main(["export", str(rgn_file), str(out), "--units", "km", "--force"]) == 0
    assert out.read_bytes() != first
    # never over its own input, not even with --force (a REGN named like an output)
    odd = tmp_path / "map.obj"
    odd.write_bytes(rgn_file.read_bytes())
    assert main(["export", str(odd), str(odd), "--force"]) == 2
    assert "is the input file" in capsys.readouterr().err
    assert odd.read_bytes() == rgn_file.read_bytes()


@pytest.mark.parametrize("plane", ["z=900km", "x=-50km", "y=50000", "z=-80km"])
def test_render_refuses_a_slice_off_the_box(rgn_file, amap, tmp_path, capsys, plane):
    from regn.export.render import render
    out = tmp_path / "p.png"
    assert main(["render", str(rgn_file), "-o", str(out), "--slice", plane]) == 2
    err = capsys.readouterr().err
    assert err.startswith("regn: ") and "does not cut the box" in err and err.count("\n") == 1
    with pytest.raises(ExportError, match="does not cut the box"):
        render(amap, out, view="slice", slice=plane)
    assert not out.exists()


def test_render_refuses_a_slice_through_holes_only(amap, tmp_path):
    """A plane inside the box that cuts no tetrahedron: every tetrahedron
    crossing z = 30 km removed."""
    from regn.export.render import render
    z = amap.tet_points[:, :, 2]
    keep = ~((z.min(1) < 30_000) & (z.max(1) > 30_000))
    cut = regn.build(amap.vertices, amap.tets[keep], bbox=(amap.bbox_min, amap.bbox_max),
                     dims=(10, 10, 10))
    with pytest.raises(ExportError, match="cuts no tetrahedron"):
        render(cut, tmp_path / "p.png", view="slice", slice="z=30km")
    render(cut, tmp_path / "q.png", view="slice", slice="z=20km", size=(300, 300))
    assert (tmp_path / "q.png").exists() and not (tmp_path / "p.png").exists()
