"""What a person reads is in the map's own scale: a 100 m room in metres, a
100 km field in km (regn.units), in ``regn info``, ``regn render`` and
``regn view`` alike, while --json keeps metres; and ``regn render`` /
``regn view`` draw a sphere's path (``--radius``) as ``regn path`` finds it."""

import json

import numpy as np
import pytest

import regn
from conftest import one_error_line, sphere_holes_map
from regn.cli import main


@pytest.fixture(scope="module")
def room(tmp_path_factory):
    """A 100 m room (four round rocks of 9 m) saved, and two free points far
    apart with 6 m of room around them."""
    mesh = sphere_holes_map(300, seed=2, holes=4, h=50.0)[0]
    path = tmp_path_factory.mktemp("room") / "room.rgn"
    regn.save(mesh, path)
    mesh = regn.load(path)
    pts = mesh.random_points(3000, seed=1)
    pts = pts[mesh.distance_to_wall(pts) > 6.0]
    a, b = pts[np.argmin(pts.sum(axis=1))], pts[np.argmax(pts.sum(axis=1))]
    return str(path), mesh, a, b


def _json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_info_tells_a_room_in_metres_and_json_stays_in_metres(room, capsys):
    path, mesh, _, _ = room
    assert main(["info", path]) == 0
    out = capsys.readouterr().out
    assert "((100, 100, 100) m)" in out
    volume = mesh.tet_volumes.sum()
    assert f"navigable volume {volume:.6g} m^3" in out
    assert " km" not in out
    doc = _json(capsys, ["info", path, "--json"])
    assert doc["volume"] == pytest.approx(volume)          # m^3, as before
    assert doc["bbox_max"] == mesh.bbox_max.tolist()         # metres
    assert doc["cell_size"][0] == pytest.approx(100 / 6, rel=1e-4)


def test_info_tells_a_field_in_km(demo_map, tmp_path, capsys):
    regn.save(demo_map, tmp_path / "demo.rgn")
    assert main(["info", str(tmp_path / "demo.rgn")]) == 0
    out = capsys.readouterr().out
    assert "((100, 100, 100) km)" in out and " km^3 " in out


def test_pictures_of_a_room_have_axes_and_path_in_metres(room, tmp_path, capsys):
    from regn.export.render import figure
    from regn.export.view import figure as view_figure
    path, mesh, a, b = room
    fig = figure(mesh, view="slice", size=(300, 300))
    ax = fig.axes[0]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("x (m)", "y (m)")
    assert ax.get_xlim()[1] > 40                              # drawn in metres
    scene = view_figure(mesh).layout.scene
    assert scene.xaxis.title.text == "x (m)"
    assert scene.xaxis.range[1] == pytest.approx(50.0)
    length = mesh.find_path(a, b).length
    assert main(["render", path, "-o", str(tmp_path / "r.png"), "--view", "grid",
                 "--size", "300x300", "--path", *map(str, a), *map(str, b)]) == 0
    assert f"; path {length:.1f} m, " in capsys.readouterr().out


@pytest.mark.parametrize("command, out", [("render", "p.png"), ("view", "p.html")])
def test_render_and_view_draw_a_spheres_path(room, tmp_path, capsys, command, out):
    path, mesh, a, b = room
    ends = [*map(str, a), *map(str, b)]
    sphere = _json(capsys, ["path", path, *ends, "--radius", "5", "--json"])
    point = _json(capsys, ["path", path, *ends, "--json"])
    assert sphere["found"] and sphere["length"] > point["length"] + 0.01
    extra = ["--view", "grid", "--size", "300x300"] if command == "render" else []
    doc = _json(capsys, [command, path, "-o", str(tmp_path / out), *extra, "--path", *ends,
                         "--radius", "5", "--json"])
    assert doc["path"]["length"] == pytest.approx(sphere["length"])
    assert doc["path"]["n_points"] == len(sphere["points"])
    assert main([command, path, "-o", str(tmp_path / out), *extra, "--path", *ends,
                 "--radius", "5", "--force"]) == 0
    assert "for a sphere of radius 5 m" in capsys.readouterr().out
    code = main([command, path, "-o", str(tmp_path / out), *extra, "--radius", "5",
                 "--force"])
    one_error_line(capsys, code, "--radius 5", "--path")
