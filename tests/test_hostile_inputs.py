"""Hostile input files and arguments (issue 21): each is one ``regn:`` line
naming the file and what is wrong, exit 2, never a traceback; and input that
does not parse is an error, never silently skipped."""

import io
import json

import numpy as np
import pytest

import regn
from regn.cli import main
from regn.inputs import points as points_mod

from conftest import one_error_line, random_map

BOX = ["--box", "-5e4", "-5e4", "-5e4", "5e4", "5e4", "5e4"]


@pytest.fixture(scope="module")
def rgn_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("hostile") / "map.rgn"
    regn.save(random_map(40, seed=4, dims=(2, 2, 2)), path)
    return path


# --- .npy / .npz -------------------------------------------------------------------
def _npy_claiming(path, shape):
    """An .npy header claiming ``shape`` int64, with no data at all."""
    header = f"{{'descr': '<i8', 'fortran_order': False, 'shape': {shape}, }}"
    header += " " * (118 - len(header)) + "\n"
    path.write_bytes(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little")
                     + header.encode())
    return path


def _hostile_npy(tmp_path, kind):
    path = tmp_path / f"{kind}.npy"
    if kind == "huge":
        return _npy_claiming(path, (10 ** 13,))
    if kind == "structured":
        np.save(path, np.zeros(5, dtype=[("a", "<f8"), ("b", "<i4")]))
    elif kind == "timedelta":
        np.save(path, np.array([1, 2], dtype="m8[s]"))
    elif kind == "npz":
        np.savez(tmp_path / "x.npz", a=np.zeros(3))
        path.write_bytes((tmp_path / "x.npz").read_bytes())
    elif kind == "truncated":
        np.save(path, np.zeros((100, 3), dtype=np.int64))
        path.write_bytes(path.read_bytes()[:-8])
    elif kind == "object":
        np.save(path, np.array([1, "a"], dtype=object), allow_pickle=True)
    return path


@pytest.mark.parametrize("kind,needle", [
    ("huge", "needs 80000000000000 bytes"), ("structured", "structured"),
    ("timedelta", "timedelta"), ("npz", "zip archive"), ("truncated", "needs 2400 bytes"),
    ("object", "object")])
@pytest.mark.parametrize("option", ["--cost-scale", "--exclude", "--points"])
def test_bad_npy_is_one_line(rgn_file, tmp_path, capsys, kind, needle, option):
    bad = str(_hostile_npy(tmp_path, kind))
    if option == "--points":
        argv = ["locate", str(rgn_file), "--points", bad]
    else:
        argv = ["path", str(rgn_file), "0", "0", "0", "1", "1", "1", option, bad]
    one_error_line(capsys, main(argv), bad, needle)


def test_exclude_takes_bools_and_indices(rgn_file, tmp_path, capsys):
    mesh = regn.load(rgn_file)
    a, b = mesh.random_points(2, seed=3)
    argv = ["path", str(rgn_file), *map(str, a), *map(str, b), "--json"]
    assert main(argv) == 0
    tets = json.loads(capsys.readouterr().out)["tets"]
    np.save(tmp_path / "ex.npy", np.array([tets[0]], dtype=np.uint16))
    assert main(argv + ["--exclude", str(tmp_path / "ex.npy")]) == 1
    assert json.loads(capsys.readouterr().out)["status"] == "excluded"
    np.save(tmp_path / "ex.npy", np.array([mesh.n_tets]))
    one_error_line(capsys, main(argv + ["--exclude", str(tmp_path / "ex.npy")]),
                   "out of range")


@pytest.mark.parametrize("order", ["C", "F"])
def test_npy_points_are_read_in_blocks(rgn_file, tmp_path, capsys, monkeypatch, order):
    """Blocks of 7 rows, either memory order, give what one call on all gives."""
    monkeypatch.setattr(points_mod, "CHUNK_ROWS", 7)
    mesh = regn.load(rgn_file)
    pts = np.concatenate([mesh.random_points(40, seed=1), [[9e9, 0, 0]]])
    np.save(tmp_path / "p.npy", np.asarray(pts.astype(">f4"), order=order))
    assert main(["locate", str(rgn_file), "--points", str(tmp_path / "p.npy"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == \
        mesh.locate(pts.astype(np.float32).astype(np.float64)).tolist()


# --- text points ------------------------------------------------------------------------
@pytest.mark.parametrize("text,line", [
    ("0x10 0 0\n", 1), ("0;0;0\n", 1), ("1 2 3\n0x10 0 0\n", 2), ("1_0 0 0\n", 1),
    ("1 2 3\nx,y,z\n", 2), ("# c\n\n1 2 3 4\n", 3), ("1 2 3 # note\n", 1),
    ("1 2 3\n\xff\xfe 1 2\n", 2)])
def test_a_line_that_is_not_three_numbers_is_named(rgn_file, capsys, monkeypatch, text, line):
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text.encode("latin-1"))))
    one_error_line(capsys, main(["locate", str(rgn_file)]), f"<stdin>: line {line}:")


@pytest.mark.parametrize("text", [
    "\ufeff0,0,0\n1,1,1\n", "x,y,z\n0 0 0\n1,1,1", "\ufeffX Y Z\r\n0 0 0\r\n1 1 1\r\n",
    "# points\n0 0 0\n\n  1 , 1 , 1  \n", "0e0 +0 -0.0\n1. .1e1 1E+0\n"])
def test_accepted_spellings(rgn_file, capsys, monkeypatch, text):
    """A byte-order mark never costs the first point; a header only on line 1."""
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8"))))
    assert main(["locate", str(rgn_file), "--json"]) == 0
    mesh = regn.load(rgn_file)
    assert json.loads(capsys.readouterr().out) == mesh.locate([[0, 0, 0], [1, 1, 1]]).tolist()


def test_text_blocks_cut_anywhere(rgn_file, monkeypatch, capsys):
    """Blocks of 5 bytes (lines cut in the middle) give the same answers and
    line numbers as reading everything at once."""
    mesh = regn.load(rgn_file)
    pts = mesh.random_points(30, seed=2)
    text = "x y z\n" + "".join(f"{x!r},{y!r} {z!r}\n" for x, y, z in pts.tolist())
    monkeypatch.setattr(points_mod, "BLOCK_BYTES", 5)
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    assert main(["clearance", str(rgn_file), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == \
        pytest.approx(mesh.distance_to_wall(pts).tolist())
    monkeypatch.setattr("sys.stdin", io.StringIO(text + "1 2\n"))
    one_error_line(capsys, main(["clearance", str(rgn_file)]), f"line {len(pts) + 2}:")


def test_an_endless_line_is_refused(rgn_file, monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO("1" * (points_mod.MAX_LINE_BYTES + 10)))
    one_error_line(capsys, main(["locate", str(rgn_file)]), "line 1 is longer than")


def test_streamed_json_is_the_same_text(rgn_file, monkeypatch, capsys):
    """nearest --json and raycasts --json, answered 3 rows at a time, print
    what print_json prints for the whole list (NaN as null included)."""
    from regn.cli._common import print_json
    mesh = regn.load(rgn_file)
    # (a clear ray's normal is NaN: null in the JSON)
    pts = np.concatenate([mesh.random_points(10, seed=5), [[9e9, 0, 0]]])
    monkeypatch.setattr(points_mod, "BLOCK_BYTES", 40)
    monkeypatch.setattr("sys.stdin", io.StringIO("".join(
        f"{x!r} {y!r} {z!r}\n" for x, y, z in pts.tolist())))
    assert main(["nearest", str(rgn_file), "--json"]) == 0
    streamed = capsys.readouterr().out
    r = mesh.nearest(pts)
    print_json([{"point": p, "tet": t} for p, t in zip(r.points, r.tets)])
    assert streamed == capsys.readouterr().out
    seg = np.hstack([pts[:-1], pts[1:]])
    monkeypatch.setattr("sys.stdin", io.StringIO("".join(
        " ".join(map(repr, row)) + "\n" for row in seg.tolist())))
    assert main(["raycasts", str(rgn_file), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert [g["status"] for g in got] == mesh.raycast_many(seg[:, :3], seg[:, 3:]).status.tolist()


def test_streamed_json_cut_short_stays_one_document(rgn_file, monkeypatch, capsys):
    """A bad line after earlier blocks were answered: --json output is still one
    JSON list (the answers so far, then the error object), exit 2, one
    regn: line on stderr."""
    monkeypatch.setattr(points_mod, "BLOCK_BYTES", 40)
    monkeypatch.setattr("sys.stdin", io.StringIO("0 0 0\n" * 30 + "foo\n"))
    assert main(["locate", str(rgn_file), "--json"]) == 2
    cap = capsys.readouterr()
    doc = json.loads(cap.out)
    # the answers of the blocks read before the bad one, then the error
    assert 0 < len(doc) - 1 < 31 and all(isinstance(t, int) for t in doc[:-1])
    assert doc[-1]["exit"] == 2 and "line 31" in doc[-1]["error"]
    assert cap.err.count("regn: ") == 1 and "line 31" in cap.err


# --- numbers on the command line ----------------------------------------------------
@pytest.mark.parametrize("start", [["-1e4", "0", "0"], ["-1.5e3", "-0", "-.5"],
                                   ["-1e-0", "0", "0"], ["-.5E1", "0", "0"], ["-1E+4", "0", "0"]])
def test_negative_numbers_in_any_spelling(rgn_file, capsys, start):
    code = main(["path", str(rgn_file), *start, "0", "0", "0", "--json"])
    out = capsys.readouterr()
    assert "error" not in out.err and code in (0, 1)
    assert json.loads(out.out)["status"] in ("ok", "start_outside")
    code = main(["raycast", str(rgn_file), "0", "0", "0", *start, "--json"])
    assert json.loads(capsys.readouterr().out)["status"] in ("hit", "clear", "lost")


@pytest.mark.parametrize("value", ["-inf", "-nan", "nan", "inf", "-Infinity"])
def test_non_finite_numbers_are_read_and_refused_as_coordinates(rgn_file, capsys, value):
    """-inf and -nan are numbers (not options), and not coordinates: exit 2."""
    with pytest.raises(SystemExit) as exit_:
        main(["path", str(rgn_file), value, "0", "0", "0", "0", "0", "--json"])
    out = capsys.readouterr()
    assert exit_.value.code == 2 and "argument x0" in json.loads(out.out)["error"]
    assert "not a finite coordinate" in out.err and out.err.count("\n") == 1


def test_build_box_takes_scientific_negatives():
    from regn.cli import _parser
    args = _parser("build").parse_args(["build", *BOX, "-o", "x.rgn"])
    assert args.box == [-5e4, -5e4, -5e4, 5e4, 5e4, 5e4]


@pytest.mark.parametrize("argv,needle", [
    (["render", "{map}", "-o", "{tmp}/a.png", "--dpi", "0"], "--dpi 0"),
    (["render", "{map}", "-o", "{tmp}/a.png", "--dpi", "100000"], "--dpi 100000"),
    (["diff", "{map}", "{map}", "--tol", "-1"], "--tol"),
    (["diff", "{map}", "{map}", "--tol", "nan"], "--tol"),
    (["chunk", "{map}@-4"], "offset")])
def test_numeric_options_are_range_checked(rgn_file, tmp_path, capsys, argv, needle):
    argv = [a.format(map=rgn_file, tmp=tmp_path) for a in argv]
    one_error_line(capsys, main(argv), needle)


def test_dollar_signs_in_names_and_titles_are_text(rgn_file, tmp_path, capsys):
    odd = tmp_path / "x$\\frac$.rgn"
    odd.write_bytes(rgn_file.read_bytes())
    assert main(["render", str(odd), "-o", str(tmp_path / "a.png"), "--view", "grid"]) == 0
    assert main(["render", str(rgn_file), "-o", str(tmp_path / "b.png"), "--view", "grid",
                 "--title", "$\\undefinedmacro{$"]) == 0
    assert (tmp_path / "b.png").read_bytes()[:4] == b"\x89PNG"


# --- sphere files -------------------------------------------------------------------
@pytest.mark.parametrize("name,text,needle", [
    ("big.json", '[{"x": 0, "y": 0, "z": 0, "radius": 1' + "0" * 400 + "}]",
     "sphere 0: radius must be a finite number"),
    ("digits.json", '[{"x": 0, "y": 0, "z": 0, "radius": ' + "9" * 5000 + "}]",
     "sphere 0: radius"),
    ("deep.json", "[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ("nan.json", '[{"x": NaN, "y": 0, "z": 0, "r": 1}]', "sphere 0: x"),
    ("f32.json", '[{"x": 3.5e38, "y": 0, "z": 0, "r": 1}]', "float32"),
    ("bool.json", '[{"x": 0, "y": 0, "z": 0, "r": true}]', "r must be a number"),
    ("big.csv", "0,0,0,1e308\n", "line 1: radius must be a finite number"),
    ("inf.csv", "x,y,z,r\n0,0,0,1\n-inf,0,0,1\n", "line 3: x"),
    ("field.csv", "0,0,0," + "1" * 200_000 + "\n", "line 1 is longer than"),
    ("cr.csv", "0,0,0,1\r5,6\n", "line 2: expected 4 columns"),
])
def test_bad_sphere_files(tmp_path, capsys, name, text, needle):
    path = tmp_path / name
    path.write_text(text)
    code = main(["build", *BOX, "--spheres", str(path), "-o", str(tmp_path / "o.rgn"),
                 "--coverage-samples", "0"])
    one_error_line(capsys, code, str(path), needle)


def test_sphere_file_values_are_read(tmp_path):
    from regn.inputs.obstacles import load_spheres
    path = tmp_path / "s.json"
    path.write_text('{"spheres": [{"x": 1, "y": -2.5, "z": 3e3, "radius": 4}]}')
    (s,) = load_spheres(path)
    assert tuple(s.centre) == (1.0, -2.5, 3000.0) and s.radius == 4.0


def test_obstacle_mesh_coordinates_are_checked(tmp_path, capsys):
    obj = tmp_path / "huge.obj"
    obj.write_text("v 0 0 0\nv 1e300 0 0\nv 0 1 0\nv 0 0 1\n"
                   "f 1 2 3\nf 1 2 4\nf 1 3 4\nf 2 3 4\n")
    code = main(["build", *BOX, "--obstacles", str(obj), "-o", str(tmp_path / "o.rgn"),
                 "--coverage-samples", "0"])
    one_error_line(capsys, code, str(obj), "point 1")


@pytest.mark.parametrize("argv,message", [
    (["path", "x.rgn", "1", "2"], "regn: path: the following arguments are required: "),
    (["bogus"], "regn: argument COMMAND: invalid choice: 'bogus'"),
    (["--frob"], "regn: unrecognized arguments: --frob (see regn --help)"),
    (["build", "--level", "l.obj", "--agent-radus", "1", "-o", "o.rgn"],
     "regn: build: unrecognized arguments: --agent-radus 1; did you mean --agent-radius? "
     "(see regn build --help)"),
    (["build", "--asteroids", "x"], "regn: build: argument --asteroids: invalid whole value: 'x'"),
])
def test_usage_errors_are_one_regn_line(capsys, argv, message):
    from regn.cli import main
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2
    assert err.startswith(message) and err.count("\n") == 1, err


@pytest.mark.parametrize("text,line", [
    ("abc\n1 2 3\n", "line 1: expected 3 numbers 'x y z', got 'abc'"),
    ("x y\n1 2 3\n", "line 1: expected 3 numbers 'x y z', got 'x y'"),
])
def test_a_stray_word_on_line_1_is_not_taken_for_a_header(text, line):
    with pytest.raises(regn.RegnError, match=line):
        points_mod.load_rows(stream=io.BytesIO(text.encode()))


def test_a_header_naming_each_column_is_skipped():
    rows = points_mod.load_rows(stream=io.BytesIO(b"x,y,z\n1,2,3\n"))
    assert rows.tolist() == [[1.0, 2.0, 3.0]]


@pytest.mark.parametrize("value", ["1_000", "0x10", "1j", "1e", "--"])
def test_command_line_numbers_are_spelled_as_in_point_files(capsys, value, rgn_file):
    with pytest.raises(SystemExit) as exit_:
        main(["path", str(rgn_file), value, "0", "0", "1", "1", "1"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.count("\n") == 1
    assert "invalid number value" in err or "expected one argument" in err or \
        "required" in err, err


@pytest.mark.parametrize("command", ["demo", "build", "info", "verify", "path", "serve",
                                     "export", "render", "view", "scan", "chunk", "diff"])
def test_help_is_plain_text(capsys, command):
    with pytest.raises(SystemExit) as exit_:
        main([command, "--help"])
    out = capsys.readouterr().out
    assert exit_.value.code == 0 and f"regn {command}" in out
    assert "``" not in out and ":func:" not in out and ":class:" not in out


@pytest.mark.parametrize("value", ["1_0", "0x5", "5.0", "1e3"])
def test_command_line_whole_numbers_are_decimal_digits(capsys, value, tmp_path):
    with pytest.raises(SystemExit) as exit_:
        main(["build", "--asteroids", value, "-o", str(tmp_path / "x.rgn")])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.count("\n") == 1
    assert f"argument --asteroids: invalid whole value: '{value}'" in err, err
