"""What a new user meets first: --json on every command, short summaries
when the answer went to a file, non-finite coordinates refused by name, the
build modes named, one-line reprs, quiet progress with --json and progress
where the work is long, plain words for a truncated file, a short line for a
moved box, neutral words in pictures of any map."""

import argparse
import io
import json

import numpy as np
import pytest

import regn
from regn.cli import COMMANDS, _parser, main

from conftest import one_error_line, random_map


@pytest.fixture(scope="module")
def map_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("polish") / "map.rgn"
    regn.save(random_map(60, seed=4, dims=(2, 2, 2)), path)
    return path


@pytest.fixture(scope="module")
def mesh(map_file):
    return regn.load(map_file)


def run(argv):
    """main's exit code, usage errors (SystemExit) included."""
    try:
        return main(argv)
    except SystemExit as e:
        return e.code


# --- 1. --json everywhere -----------------------------------------------------------
def test_every_command_takes_json():
    """The README says every command takes --json: ask each one's parser."""
    lacking = []
    for name in COMMANDS:
        sub = next(a for a in _parser(name)._actions
                   if isinstance(a, argparse._SubParsersAction)).choices[name]
        if "--json" not in {o for a in sub._actions for o in a.option_strings}:
            lacking.append(name)
    assert lacking == []


def test_view_export_rewrite_json_summaries(map_file, mesh, tmp_path, capsys):
    a, b = mesh.random_points(2, seed=3)
    html = tmp_path / "x.html"
    assert main(["view", str(map_file), "-o", str(html), "--json",
                 "--path", *map(str, [*a, *b])]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["output"] == str(html) and doc["bytes"] == html.stat().st_size
    route = mesh.find_path(a, b)
    assert doc["path"]["status"] == route.status
    assert doc["path"]["n_points"] == len(route.points)
    obj = tmp_path / "s.obj"
    assert main(["export", str(map_file), str(obj), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc == {"output": str(obj), "bytes": obj.stat().st_size, "kind": doc["kind"]}
    little = tmp_path / "le.rgn"
    assert main(["rewrite", str(map_file), str(little), "--byte-order", "little",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["byte_order"] == "little" and doc["bytes"] == little.stat().st_size
    assert regn.load(little).byte_order == "<"


# --- 2. path -o: a summary, not the waypoints ---------------------------------------------
def test_path_to_a_file_prints_a_summary(map_file, mesh, tmp_path, capsys):
    a, b = mesh.random_points(2, seed=5)
    route = mesh.find_path(a, b)
    assert route.found and len(route.points) >= 2
    out = tmp_path / "route.csv"
    assert main(["path", str(map_file), *map(str, [*a, *b]), "-o", str(out)]) == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    assert lines[0] == "status ok" and f"points {len(route.points)}" in lines
    assert any(ln.startswith(f"wrote {out}") for ln in lines)
    # no waypoint lines (three numbers) on stdout: they are in the file
    assert not [ln for ln in lines if len(ln.split()) == 3]
    rows = out.read_text().splitlines()[1:]
    assert len(rows) == len(route.points)
    assert main(["path", str(map_file), *map(str, [*a, *b]), "-o", str(out), "--force",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["output"] == str(out) and doc["n_points"] == len(route.points)
    assert doc["status"] == "ok" and doc["length"] == pytest.approx(route.length)
    assert "points" not in doc


# --- 3. non-finite coordinates are input errors ---------------------------------------------
@pytest.mark.parametrize("argv,needle", [
    (["path", "{map}", "0", "0", "0", "1", "1", "nan"], "argument z1"),
    (["path", "{map}", "-inf", "0", "0", "1", "1", "1", "--json"], "argument x0"),
    (["raycast", "{map}", "0", "inf", "0", "1", "1", "1"], "argument y0"),
    (["field", "{map}", "0", "0", "-nan"], "argument z"),
    (["path", "{map}", "0", "0", "0", "1", "1", "1", "--block-sphere", "0", "nan", "0",
      "5"], "--block-sphere"),
])
def test_a_non_finite_coordinate_argument_is_refused(map_file, capsys, argv, needle):
    argv = [a.replace("{map}", str(map_file)) for a in argv]
    line = one_error_line(capsys, run(argv), needle, "not a finite coordinate")
    assert "status" not in line


@pytest.mark.parametrize("command", ["locate", "nearest", "clearance"])
def test_a_non_finite_line_is_named(map_file, capsys, monkeypatch, command):
    text = "# points\n0 0 0\n\n1 2 3\n4 nan 6\n"
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    one_error_line(capsys, main([command, str(map_file)]),
                   "<stdin>: line 5: y is nan, not a finite coordinate")


def test_a_non_finite_segment_and_npy_row_are_named(map_file, tmp_path, capsys,
                                                   monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("x0 y0 z0 x1 y1 z1\n0 0 0 1 1 1\n"
                                                 "0 0 0 1 1 -inf\n"))
    one_error_line(capsys, main(["raycasts", str(map_file)]), "line 3: z1 is -inf")
    pts = np.zeros((5, 3))
    pts[3, 0] = np.inf
    np.save(tmp_path / "p.npy", pts)
    one_error_line(capsys, main(["locate", str(map_file), "--points",
                                 str(tmp_path / "p.npy")]), "row 3 (from 0): x is inf")


def test_a_single_query_refuses_a_non_finite_point(mesh):
    """The one point of a single query is the caller's mistake when it is not
    finite: the library's error names it. A batch row is answered (outside),
    so one bad row does not void the others."""
    a = mesh.random_points(1, seed=2)[0]
    calls = [(lambda: mesh.find_path(a, [0, np.nan, 0]), "goal: y is nan"),
             (lambda: mesh.find_path((np.inf, 0, 0), a, radius=10.0), "start: x is inf"),
             (lambda: mesh.find_path(a, [0, 0, np.nan], partial=True), "goal: z is nan"),
             (lambda: mesh.raycast(a, np.array([0, 0, -np.inf])), "b: z is -inf"),
             (lambda: mesh.cost_field([np.nan, 0, 0]), "goal: x is nan")]
    for call, needle in calls:
        with pytest.raises(regn.QueryError, match=needle + ", not a finite coordinate"):
            call()
    assert mesh.find_path(a, a).found and mesh.raycast(a, a).clear
    assert mesh.locate([[np.nan, 0, 0]]).tolist() == [-1]
    assert mesh.find_paths([a, [np.nan, 0, 0]], [a, a]).status.tolist() == \
        ["ok", "start_outside"]


def test_a_world_query_refuses_a_non_finite_point(field_world, capsys):
    """A world's single queries name a non-finite point as a mesh's do,
    from Python and from the command line."""
    world = regn.load(str(field_world / "world.json"))
    a = (-15_000.0, -14_000.0, -13_000.0)
    calls = [(lambda: world.find_path(a, [0, np.nan, 0]), "goal: y is nan"),
             (lambda: world.find_path((np.inf, 0, 0), a, radius=500.0), "start: x is inf"),
             (lambda: world.raycast(a, np.array([0, 0, -np.inf])), "b: z is -inf"),
             (lambda: world.cost_field([np.nan, 0, 0]), "goal: x is nan")]
    for call, needle in calls:
        with pytest.raises(regn.QueryError, match=needle + ", not a finite coordinate"):
            call()
    assert world.find_path(a, a).found
    line = one_error_line(capsys, run(["path", str(field_world / "world.json"),
                                       *map(str, a), "0", "nan", "0"]))
    assert "not a finite coordinate" in line


# --- 4. build names every mode ------------------------------------------------------------
def test_build_without_a_mode_names_every_mode(tmp_path, capsys):
    line = one_error_line(capsys, run(["build", "-o", str(tmp_path / "x.rgn")]))
    for mode in ("--box", "--asteroids", "--from-mesh", "--level", "--voxels"):
        assert mode in line


# --- 5. one-line reprs -------------------------------------------------------------------
def test_results_print_on_one_line(mesh):
    a, b = mesh.random_points(2, seed=7)
    route = mesh.find_path(a, b)
    assert route.found and len(route.points) > 1
    text = repr(route)
    assert "\n" not in text and len(text) < 160
    assert "ok" in text and f"{len(route.points)} points" in text
    assert f"{route.length:.6g}" in text
    lost = mesh.find_path([1e9, 0, 0], b)
    assert repr(lost) == "<regn Path: start_outside>"
    hit = mesh.raycast(a, [1e9, 1, 1])
    assert hit.status == "hit"
    text = repr(hit)
    assert "\n" not in text and f"face {hit.face}" in text
    many = mesh.find_paths(mesh.random_points(20, seed=1), mesh.random_points(20, seed=2))
    assert "\n" not in repr(many) and "20 queries" in repr(many)
    rays = mesh.raycast_many(np.zeros((4, 3)), np.full((4, 3), 1e9))
    assert "\n" not in repr(rays) and "4 segments" in repr(rays)


# --- 6, 7. progress: quiet with --json, shown where the work is long -------------------------
class _Terminal(io.StringIO):
    """stderr as a terminal."""

    def isatty(self):
        return True


@pytest.fixture
def terminal(monkeypatch):
    """-> ``attach()``: stderr becomes a terminal (called in the test: pytest's
    capture sets stderr again after the fixtures) and the bar shows at once."""
    import regn.cli._progress as progress
    monkeypatch.setattr(progress, "QUIET_SECONDS", 0.0)

    def attach():
        err = _Terminal()
        monkeypatch.setattr("sys.stderr", err)
        return err
    return attach


def test_verify_shows_progress_at_a_terminal_but_not_with_json(map_file, terminal, capsys):
    terminal = terminal()
    assert main(["verify", str(map_file), "--strict"]) == 0
    assert "%" in terminal.getvalue() and "check 1 of" in terminal.getvalue()
    capsys.readouterr()
    terminal.seek(0)
    terminal.truncate()
    assert main(["verify", str(map_file), "--strict", "--json"]) == 0
    assert terminal.getvalue() == ""
    assert json.loads(capsys.readouterr().out)["files"][0]["ok"]


def test_build_progress_is_quiet_with_json(tmp_path, terminal, capsys):
    argv = ["build", "--asteroids", "2", "--half-extent", "5000", "--seed", "2",
            "--coverage-samples", "0", "-o", str(tmp_path / "a.rgn")]
    terminal = terminal()
    assert main(argv) == 0
    assert "%" in terminal.getvalue()
    capsys.readouterr()
    terminal.seek(0)
    terminal.truncate()
    assert main(argv + ["--force", "--json"]) == 0
    assert terminal.getvalue() == ""
    assert json.loads(capsys.readouterr().out)["tets"] > 0


def test_fly_progress_says_how_far(mesh, terminal):
    from regn.crowd.crowd import Crowd
    from regn.cli.fly_cmd import _progress
    crowd = Crowd(mesh)
    a, b = mesh.random_points(2, seed=3), mesh.random_points(2, seed=4)
    crowd.add_agents(a, b, radius=1.0, max_speed=10.0, max_accel=5.0)
    terminal = terminal()
    assert _progress(argparse.Namespace(json=True), crowd) is None
    show = _progress(argparse.Namespace(json=False), crowd)
    show(25, 100, 1.0)
    assert "step 25 of 100" in terminal.getvalue() and " 25%" in terminal.getvalue()
    show(7, None, 1.0)                          # --until-arrived: no step count ahead
    assert "flying, step 7" in terminal.getvalue()
    show.close()


# --- 8. a truncated file in plain words -----------------------------------------------------
def test_a_truncated_file_says_so_first(map_file, tmp_path, capsys):
    data = map_file.read_bytes()
    for cut in (1000, len(data) - 10):
        short = tmp_path / "trunc.rgn"
        short.write_bytes(data[:cut])
        with pytest.raises(regn.FormatError) as info:
            regn.load(short)
        msg = str(info.value)
        assert msg.startswith(f"{short}: file truncated? it is {cut:,} bytes".replace(",", " "))
        assert "offset 0x" in msg and info.value.offset is not None
        said = int(msg.split("say at least ")[1].split(" (")[0].replace(" ", ""))
        assert cut < said <= len(data)
        one_error_line(capsys, main(["info", str(short)]), "file truncated?")


# --- 9. build reports and pictures in plain words ------------------------------------------------
def test_a_moved_box_is_one_short_line(tmp_path, capsys):
    out = tmp_path / "room.rgn"
    box = ["--box", "-12345.678", "-12345.678", "-12345.678", "12345.678", "12345.678",
           "12345.678"]
    assert main(["build", *box, "--dims", "3", "3", "3", "--coverage-samples", "0",
                 "-o", str(out)]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("  box"))
    assert line.strip().startswith("box widened by at most") and " m " in line
    assert "->" not in line and len(line) < 120
    assert main(["build", *box, "--dims", "3", "3", "3", "--coverage-samples", "0",
                 "-o", str(out), "--force", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert "min x -12345.678 ->" in rep["box_change"]
    m = regn.load(out)
    moved = max(np.abs(m.bbox_min + 12345.678).max(), np.abs(m.bbox_max - 12345.678).max())
    assert rep["box_moved_m"] == pytest.approx(moved, rel=1e-6)


def test_a_world_sphere_path_shows_progress_at_a_terminal(field_world, terminal, capsys):
    """A sphere's path over a world computes clearances tile by tile
    (seconds): the bar names that phase; with --json nothing is drawn."""
    world = str(field_world / "world.json")
    ends = ["-15000", "-14000", "-13000", "15000", "14000", "13500"]
    terminal = terminal()
    assert main(["path", world, *ends, "--radius", "500"]) == 0
    assert "tile clearances" in terminal.getvalue() and "100%" in terminal.getvalue()
    capsys.readouterr()
    terminal.seek(0)
    terminal.truncate()
    assert main(["path", world, *ends, "--radius", "500", "--json"]) == 0
    assert terminal.getvalue() == ""
    assert json.loads(capsys.readouterr().out)["found"]


def test_paths_shows_its_count_at_a_terminal(mesh, map_file, terminal, monkeypatch, capsys,
                                             tmp_path):
    """regn paths answers a stream of queries: at a terminal it counts them,
    with a bar when stdin is a file (its size is the total), without one
    from a pipe; the answers are the same, in order."""
    import regn.cli.query_cmds as cmds
    monkeypatch.setattr(cmds, "PATHS_SHOWN_EVERY", 2)
    pts = mesh.random_points(10, seed=3)
    rows = "".join(" ".join(f"{v:.3f}" for v in (*pts[i], *pts[9 - i])) + "\n"
                   for i in range(5))
    (tmp_path / "q.txt").write_text(rows)
    with open(tmp_path / "q.txt") as fh:
        monkeypatch.setattr("sys.stdin", fh)
        shown = terminal()
        assert main(["paths", str(map_file)]) == 0
    from_file = capsys.readouterr().out
    assert "100% 5 paths" in shown.getvalue() and "2 paths" in shown.getvalue()
    monkeypatch.setattr("sys.stdin", io.StringIO(rows))
    shown = terminal()
    assert main(["paths", str(map_file)]) == 0
    assert "5 paths (" in shown.getvalue() and "%" not in shown.getvalue()
    assert capsys.readouterr().out == from_file and len(from_file.splitlines()) == 5


@pytest.mark.parametrize("source", [["--asteroids", "3"], ["--level", "{hangar}"]])
def test_a_negative_agent_radius_names_the_option(source, tmp_path, capsys):
    """The refusal of --agent-radius -1 names the option it came from."""
    from regn.levels.examples import hangar_obj
    hangar = tmp_path / "hangar.obj"
    hangar.write_text(hangar_obj())
    argv = ["build"] + [a.format(hangar=hangar) for a in source] + [
        "--agent-radius", "-1", "-o", str(tmp_path / "x.rgn")]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--agent-radius" in err[0] and "got -1" in err[0]
