"""``regn path … -o FILE``: the polyline as .vtp / .csv / .obj / .ply / .json,
with each point's length along the path and its clearance, read back with
the tools users open them in (VTK, trimesh) or parsed by hand."""

import json
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import regn
from regn.cli import main
from test_export import asteroid_map

START, GOAL = (-45e3, -40e3, -35e3), (40e3, 42e3, 38e3)


@pytest.fixture(scope="module")
def field(tmp_path_factory):
    path = tmp_path_factory.mktemp("paths") / "field.rgn"
    regn.save(asteroid_map(), path)
    return regn.load(path)


@pytest.fixture(scope="module")
def route(field):
    res = field.find_path(START, GOAL)
    assert res.found and len(res.points) > 3
    return res


def _run_path(field, out, *extra):
    return main(["path", str(field.path), *map(str, START + GOAL), "-o", str(out), *extra])


def _expected(field, route, scale=1.0):
    """points, length along, clearance: computed here from the path itself, the
    clearance by trimesh on the boundary surface (independent of regn's search)."""
    import trimesh
    pts = route.points
    along = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(pts, axis=0), axis=1))])
    v, tri = field.boundary_surface()
    _, dist, _ = trimesh.proximity.closest_point(trimesh.Trimesh(v, tri, process=False), pts)
    return pts / scale, along / scale, dist / scale


def _parse_vtp(path):
    """(points, connectivity, offsets, point arrays, field arrays), read with VTK
    when it is installed, else from the XML by hand."""
    try:
        import vtk
        from vtk.util.numpy_support import vtk_to_numpy
    except ImportError:
        vtk = None
    if vtk is not None:
        reader = vtk.vtkXMLPolyDataReader()
        reader.SetFileName(str(path))
        reader.Update()
        assert reader.GetErrorCode() == 0
        pd = reader.GetOutput()
        lines = pd.GetLines()
        conn = vtk_to_numpy(lines.GetConnectivityArray())
        offsets = vtk_to_numpy(lines.GetOffsetsArray())[1:]
        point = {pd.GetPointData().GetArrayName(k): vtk_to_numpy(pd.GetPointData().GetArray(k))
                 for k in range(pd.GetPointData().GetNumberOfArrays())}
        fields = {pd.GetFieldData().GetArrayName(k): vtk_to_numpy(pd.GetFieldData().GetArray(k))
                  for k in range(pd.GetFieldData().GetNumberOfArrays())}
        return vtk_to_numpy(pd.GetPoints().GetData()), conn, offsets, point, fields
    root = ET.parse(path).getroot()
    assert root.get("type") == "PolyData"

    def nums(el):
        return np.array(el.text.split(), dtype=float)
    piece = root.find("PolyData/Piece")
    pts = nums(piece.find("Points/DataArray")).reshape(-1, 3)
    arrays = {a.get("Name"): nums(a) for a in piece.find("Lines")}
    point = {a.get("Name"): nums(a) for a in piece.find("PointData")}
    fields = {a.get("Name"): nums(a) for a in root.find("PolyData/FieldData")}
    return pts, arrays["connectivity"], arrays["offsets"], point, fields


@pytest.mark.parametrize("units, scale", [("m", 1.0), ("km", 1000.0)])
def test_vtp_reads_back(field, route, tmp_path, units, scale):
    out = tmp_path / "p.vtp"
    assert _run_path(field, out, "--units", units) == 0
    pts, conn, offsets, point, fields = _parse_vtp(out)
    want_pts, want_len, want_clear = _expected(field, route, scale)
    np.testing.assert_allclose(pts, want_pts, rtol=1e-12)
    np.testing.assert_array_equal(conn, np.arange(len(pts)))      # one polyline, in order
    np.testing.assert_array_equal(offsets, [len(pts)])
    np.testing.assert_allclose(point["length"], want_len, rtol=1e-9)
    np.testing.assert_allclose(point["clearance"], want_clear, rtol=1e-6, atol=1e-6 / scale)
    assert fields["metres_per_unit"][0] == scale
    assert f"coordinates in {units}" in out.read_text().splitlines()[1]


def test_csv_json_ply_obj_read_back(field, route, tmp_path):
    import trimesh
    pts, along, clear = _expected(field, route)
    for ext in ("csv", "json", "ply", "obj"):
        assert _run_path(field, tmp_path / f"p.{ext}") == 0, ext
    table = np.genfromtxt(tmp_path / "p.csv", delimiter=",", names=True)
    assert table.dtype.names == ("x_m", "y_m", "z_m", "length_m", "clearance_m")
    np.testing.assert_allclose(np.column_stack([table["x_m"], table["y_m"], table["z_m"]]),
                               pts, rtol=1e-12)
    np.testing.assert_allclose(table["length_m"], along, rtol=1e-9)
    np.testing.assert_allclose(table["clearance_m"], clear, rtol=1e-6, atol=1e-6)
    doc = json.loads((tmp_path / "p.json").read_text())
    assert doc["format"] == "regn-path/1" and doc["units"] == "m" and doc["status"] == "ok"
    np.testing.assert_allclose(doc["points"], pts, rtol=1e-12)
    np.testing.assert_allclose(doc["length_along"], along, rtol=1e-9)
    np.testing.assert_allclose(doc["clearance"], clear, rtol=1e-6, atol=1e-6)
    assert doc["length"] == pytest.approx(route.length) and doc["cost"] == pytest.approx(route.cost)
    # PLY: the header by hand, then trimesh (which reads the edges as a 3D path)
    text = (tmp_path / "p.ply").read_text().splitlines()
    body = text[text.index("end_header") + 1:]
    verts = np.array([r.split() for r in body[:len(pts)]], dtype=float)
    edges = np.array([r.split() for r in body[len(pts):]], dtype=int)
    assert "comment units m" in text
    np.testing.assert_allclose(verts, np.column_stack([pts, along, clear]), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(edges, np.column_stack([np.arange(len(pts) - 1),
                                                          np.arange(1, len(pts))]))
    tm = trimesh.load(tmp_path / "p.ply")
    np.testing.assert_allclose(tm.vertices, pts, rtol=1e-12)
    assert len(tm.entities) == 1 or sum(len(e.points) - 1 for e in tm.entities) == len(pts) - 1
    # OBJ: vertices and one 'l' element through all of them, under 'o path'
    lines = (tmp_path / "p.obj").read_text().splitlines()
    v = np.array([ln.split()[1:] for ln in lines if ln.startswith("v ")], dtype=float)
    ls = [ln.split()[1:] for ln in lines if ln.startswith("l ")]
    np.testing.assert_allclose(v, pts, rtol=1e-12)
    assert ls == [[str(i) for i in range(1, len(pts) + 1)]]
    assert "o path" in lines and "# units: m" in lines


def test_path_output_refusals(field, tmp_path, capsys):
    out = tmp_path / "p.csv"
    assert _run_path(field, out) == 0
    first = out.read_bytes()
    capsys.readouterr()
    # an existing file: refused without --force (before any search), kept
    assert _run_path(field, out, "--units", "km") == 2
    err = capsys.readouterr().err
    assert err.startswith("regn: ") and "--force" in err and err.count("\n") == 1
    assert out.read_bytes() == first
    assert _run_path(field, out, "--units", "km", "--force") == 0
    assert out.read_bytes() != first and out.read_text().startswith("x_km,")
    # an extension it cannot write
    assert _run_path(field, tmp_path / "p.stl") == 2
    assert ".vtp .csv .obj .ply .json" in capsys.readouterr().err
    assert not (tmp_path / "p.stl").exists()
    # no path: exit 1, nothing written
    lost = tmp_path / "lost.vtp"
    assert main(["path", str(field.path), "0", "0", "0", *map(str, GOAL), "-o", str(lost)]) == 1
    assert not lost.exists()                         # (0,0,0) is inside an asteroid


def test_write_path_library(field, route, tmp_path):
    from regn.errors import ExportError
    from regn.export.polyline import write_path
    t = write_path(field, route, tmp_path / "p.json", units="km")
    assert t["total_length"] == pytest.approx(route.length / 1000)
    with pytest.raises(ExportError, match="no path"):
        write_path(field, field.find_path((0, 0, 0), GOAL), tmp_path / "q.json")
    with pytest.raises(ExportError, match="unknown units"):
        write_path(field, route, tmp_path / "q.json", units="mi")
    assert not (tmp_path / "q.json").exists()
