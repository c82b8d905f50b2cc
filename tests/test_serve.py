"""Issue 18: ``regn paths``, ``regn field``, the blocker options, and ``regn
serve`` spoken to by a test client over stdin/stdout and over TCP, bad
requests included; every answer is compared with the library's."""

import io
import json
import socket
import subprocess
import sys
import threading

import numpy as np
import pytest

import regn
from regn.cli import main

from conftest import random_map


@pytest.fixture(scope="module")
def mesh():
    return random_map(300, seed=5, hole_fraction=0.15, dims=(6, 6, 6))


@pytest.fixture(scope="module")
def mesh_file(mesh, tmp_path_factory):
    f = tmp_path_factory.mktemp("serve") / "m.rgn"
    regn.save(mesh, f)
    return f


def _plain(obj):
    """A library document as the JSON an answer carries (NaN -> null ...)."""
    from regn.export.data import to_jsonable
    return json.loads(json.dumps(to_jsonable(obj)))


def _ends(mesh, n, seed):
    A, B = mesh.random_points(n, seed=seed), mesh.random_points(n, seed=seed + 1)
    B[0] = (9e5, 0, 0)
    return A, B


# --- the command line ----------------------------------------------------------------
def test_cli_paths_reads_lines_and_answers_each(mesh, mesh_file, capsys, monkeypatch):
    A, B = _ends(mesh, 9, seed=1)
    text = "x0 y0 z0 x1 y1 z1\n" + "".join(
        " ".join(map(repr, [*a.tolist(), *b.tolist()])) + "\n" for a, b in zip(A, B))
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    assert main(["paths", str(mesh_file), "--json", "--workers", "2"]) == 0
    got = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert got == [_plain(mesh.find_path(a, b).to_dict()) for a, b in zip(A, B)]
    # text: status cost length, then the points, one line a query; read in chunks
    monkeypatch.setattr("regn.inputs.points.BLOCK_BYTES", 300)    # a few lines a block
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    assert main(["paths", str(mesh_file), "--no-smooth"]) == 0
    rows = [ln.split() for ln in capsys.readouterr().out.splitlines()]
    for row, a, b in zip(rows, A, B, strict=True):
        p = mesh.find_path(a, b, smooth=False)
        assert row[0] == p.status
        if p.found:
            assert float(row[1]) == pytest.approx(p.cost, abs=1e-6)
            assert np.allclose(np.array(row[3:], float).reshape(-1, 3), p.points, atol=1e-6)
        else:
            assert row[1:] == ["nan", "nan"]
    monkeypatch.setattr("sys.stdin", io.StringIO("0 0 0 1 1 1\n1 2 3\n"))
    assert main(["paths", str(mesh_file)]) == 2
    assert "line 2" in capsys.readouterr().err


def test_cli_blockers_and_field(mesh, mesh_file, capsys):
    a, b = mesh.random_points(2, seed=7)
    free = mesh.find_path(a, b)
    mid = free.points[len(free.points) // 2]
    ends = [*map(str, a), *map(str, b)]
    args = ["path", str(mesh_file), *ends, "--json", "--block-sphere", *map(str, mid), "3000",
            "--block-box", "-1", "-1", "-1", "1", "1", "1"]
    main(args)
    got = json.loads(capsys.readouterr().out)
    f = regn.QueryFilter(mesh)
    f.block_sphere(mid, 3000)
    f.block_box((-1, -1, -1), (1, 1, 1))
    assert got == _plain(mesh.find_path(a, b, filter=f).to_dict())
    assert f.blocked[free.tets].any() and not f.blocked[got["tets"]].any()
    assert got["found"] and got["cost"] > free.cost
    main(args + ["--block-scale", "2.5"])
    got = json.loads(capsys.readouterr().out)
    g = regn.QueryFilter(mesh)
    g.block_sphere(mid, 3000, scale=2.5)
    g.block_box((-1, -1, -1), (1, 1, 1), scale=2.5)
    assert got == _plain(mesh.find_path(a, b, filter=g).to_dict())
    assert main(args + ["--block-scale", "-1"]) == 2
    assert ">= 0" in capsys.readouterr().err
    # the field: every tetrahedron, or each point's cost and next waypoint
    assert main(["field", str(mesh_file), *map(str, b), "--json"]) == 0
    field = mesh.cost_field(b)
    assert json.loads(capsys.readouterr().out) == _plain(
        {"status": "ok", "goal": b, "goal_tet": field.goal_tet, "cost": field.cost,
         "next_portal": field.next_portal})
    assert main(["field", str(mesh_file), "9e5", "0", "0"]) == 1
    assert capsys.readouterr().out.startswith("status goal_outside\n")


# --- regn serve ------------------------------------------------------------------------
def _requests(mesh):
    """(request, the library's answer) pairs covering every query."""
    from regn.cli import _queries as Q
    P = mesh.random_points(4, seed=11)
    P[3] = (9e5, 0, 0)
    A, B = _ends(mesh, 5, seed=12)
    seg = np.hstack([A, B])
    block = dict(block_sphere=[[*P[0], 4000.0]], block_box=[[0, 0, 0, 5000, 5000, 5000]])
    f = regn.QueryFilter(mesh)
    f.block_sphere(P[0], 4000.0)
    f.block_box((0, 0, 0), (5000, 5000, 5000))
    excl = [int(mesh.locate(P[1])[0])]
    mask = np.zeros(mesh.n_tets, bool)
    mask[excl] = True
    return [
        ({"query": "locate", "points": P.tolist()}, {"result": mesh.locate(P)}),
        ({"query": "nearest", "points": P.tolist()}, {"result": Q.nearest_doc(mesh.nearest(P))}),
        ({"query": "clearance", "points": P[0].tolist()},
         {"result": mesh.distance_to_wall(P[:1])}),
        ({"query": "clearance", "points": P.tolist(), "wall": True},
         {"result": Q.wall_doc(mesh.nearest_wall(P))}),
        ({"query": "raycast", "a": P[0].tolist(), "b": P[3].tolist()},
         mesh.raycast(P[0], P[3]).to_dict()),
        ({"query": "raycasts", "segments": seg.tolist()},
         {"result": Q.raycasts_doc(mesh.raycast_many(A, B))}),
        ({"query": "path", "start": A[1].tolist(), "goal": B[1].tolist(), "smooth": False},
         mesh.find_path(A[1], B[1], smooth=False).to_dict()),
        ({"query": "path", "start": A[2].tolist(), "goal": B[2].tolist(), **block},
         mesh.find_path(A[2], B[2], filter=f).to_dict()),
        ({"query": "path", "start": A[3].tolist(), "goal": B[3].tolist(), "exclude": excl,
          "cost_scale": [2.0] * mesh.n_tets},
         mesh.find_path(A[3], B[3], exclude=mask, cost_scale=np.full(mesh.n_tets, 2.0))
         .to_dict()),
        ({"query": "paths", "segments": seg.tolist(), **block},
         {"result": [p.to_dict() for p in mesh.find_paths(A, B, filter=f)]}),
        # a sphere's queries (issue 16)
        ({"query": "paths", "segments": seg.tolist(), "radius": 300.0},
         {"result": [p.to_dict() for p in mesh.find_paths(A, B, radius=300.0)]}),
        ({"query": "path", "start": A[1].tolist(), "goal": B[1].tolist(), "radius": 300},
         mesh.find_path(A[1], B[1], radius=300.0).to_dict()),
        ({"query": "nearest", "points": P.tolist(), "radius": 800.0},
         {"result": Q.nearest_doc(mesh.nearest(P, radius=800.0))}),
        ({"query": "raycasts", "segments": seg.tolist(), "radius": 800.0},
         {"result": Q.raycasts_doc(mesh.raycast_many(A, B, radius=800.0))}),
        ({"query": "field", "goal": B[1].tolist(), "points": A.tolist()},
         Q.field_doc(mesh.cost_field(B[1]), A)),
        ({"query": "field", "goal": B[1].tolist(), "block_scale": 3.0, **block},
         Q.field_doc(mesh.cost_field(B[1], filter=_scaled(mesh, P[0])))),
    ]


def _scaled(mesh, c):
    f = regn.QueryFilter(mesh)
    f.block_sphere(c, 4000.0, scale=3.0)
    f.block_box((0, 0, 0), (5000, 5000, 5000), scale=3.0)
    return f


#: (request line, id in the answer, words of the error)
BAD = [
    ('{"id": 1, "query": "path", "start": [0, 0, 0], "goal": [NaN, 0, 0]}', None, "NaN"),
    ("this is not json", None, "not valid JSON"),
    ('{"id": 2, "query": "path"', None, "not valid JSON"),
    ("[1, 2, 3]", None, "JSON object"),
    ("[" * 100000, None, "not valid JSON"),
    ('{"id": 3, "query": "teleport"}', 3, "unknown query"),
    ('{"id": 4}', 4, "unknown query"),
    ('{"id": "five", "query": "locate", "points": [[1, 2]]}', "five", "rows of 3"),
    ('{"id": 6, "query": "locate", "points": [[1, 2, "x"]]}', 6, "numbers"),
    ('{"id": 7, "query": "locate", "points": [[1, 2, 3], [4]]}', 7, "numbers"),
    ('{"id": 8, "query": "locate"}', 8, "missing field(s) points"),
    ('{"id": 9, "query": "locate", "points": [], "colour": 1}', 9, "unknown field(s) colour"),
    ('{"id": 10, "query": "path", "start": [0, 0], "goal": [0, 0, 0]}', 10, "start"),
    ('{"id": 11, "query": "path", "start": [0, 0, 0], "goal": [0, 0, 0], "smooth": "yes"}',
     11, "smooth"),
    ('{"id": 12, "query": "path", "start": [0, 0, 0], "goal": [0, 0, 0], '
     '"cost_scale": [1, 2]}', 12, "cost_scale"),
    ('{"id": 13, "query": "path", "start": [0, 0, 0], "goal": [0, 0, 0], '
     '"exclude": [99999999]}', 13, "out of range"),
    ('{"id": 14, "query": "path", "start": [0, 0, 0], "goal": [0, 0, 0], '
     '"block_sphere": [[0, 0, 0]]}', 14, "rows of 4"),
    ('{"id": 15, "query": "paths", "segments": [[0, 0, 0, 1, 1, 1]], '
     '"block_box": [[0, 0, 0, 1, 1, 1e999]]}', 15, "finite"),
    ('{"id": 16, "query": "field", "goal": [0, 0, 0], "block_sphere": [[0, 0, 0, 1]], '
     '"block_scale": "big"}', 16, "block_scale"),
    ('{"id": 17, "query": "raycasts", "segments": [[0, 0, 0, 1, 1]]}', 17, "rows of 6"),
    ('{"id": 18, "query": "clearance", "points": [[0, 0, 0]], "wall": 1}', 18,
     "wall: must be true or false"),
    ('{"id": 19, "query": "locate", "points": [[0, 0, 0], [0.5, false, 1]]}', 19,
     "points: must be numbers"),
    ('{"id": 20, "query": "raycast", "a": [0, 0, true], "b": [1, 1, 1]}', 20,
     "a: must be numbers"),
]


def _check_bad(answers):
    assert len(answers) == len(BAD)
    for (line, rid, words), got in zip(BAD, answers):
        assert set(got) == {"id", "error"} and got["id"] == rid, (line, got)
        assert words in got["error"], (line, got)


def test_service_answers_like_the_library(mesh):
    from regn.cli.serve_cmd import Service
    service = Service(mesh, workers=2)
    service.warm_up()
    for k, (req, want) in enumerate(_requests(mesh)):
        got = json.loads(service.answer(json.dumps({"id": k, **req})))
        assert got == _plain({"id": k, **want}), req["query"]
    _check_bad([json.loads(service.answer(line)) for line, _, _ in BAD])
    # the cached field answers a second request the same way
    req, want = _requests(mesh)[-2]
    assert json.loads(service.answer(json.dumps(req))) == _plain({"id": None, **want})


def test_serve_over_stdin_and_stdout(mesh, mesh_file, monkeypatch, capsysbinary):
    good = _requests(mesh)
    lines = [json.dumps({"id": k, **req}) for k, (req, _) in enumerate(good)]
    text = "\n".join(lines[:3] + [b for b, _, _ in BAD] + ["", "x" * 300000] + lines[3:])
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    assert main(["serve", str(mesh_file), "--max-request", "200000"]) == 0
    answers = [json.loads(a) for a in capsysbinary.readouterr().out.splitlines()]
    assert len(answers) == len(good) + len(BAD) + 1          # the blank line: no answer
    _check_bad(answers[3:3 + len(BAD)])
    assert answers[3 + len(BAD)] == {"id": None, "error": "request longer than 200000 bytes"}
    rest = answers[:3] + answers[4 + len(BAD):]
    assert rest == [_plain({"id": k, **want}) for k, (_, want) in enumerate(good)]


def _client(port, lines, out):
    with socket.create_connection(("127.0.0.1", port), timeout=60) as s:
        s.sendall("".join(line + "\n" for line in lines).encode())
        s.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := s.recv(1 << 16):
            data += chunk
    out.extend(json.loads(a) for a in data.decode().splitlines())


def test_serve_over_tcp_to_several_clients(mesh, mesh_file):
    proc = subprocess.Popen([sys.executable, "-c", "from regn.cli import entry; entry()",
                             "serve", str(mesh_file),
                             "--port", "0", "--max-request", "200"],
                            stderr=subprocess.PIPE, text=True)
    try:
        banner = proc.stderr.readline()
        assert banner.startswith("regn serve: listening on 127.0.0.1:"), banner
        port = int(banner.rsplit(":", 1)[1])
        A, B = mesh.random_points(40, seed=21), mesh.random_points(40, seed=22)
        want = [_plain({"id": i, **mesh.find_path(a, b).to_dict()})
                for i, (a, b) in enumerate(zip(A, B))]
        lines = [json.dumps({"id": i, "query": "path", "start": a.tolist(), "goal": b.tolist()})
                 for i, (a, b) in enumerate(zip(A, B))]
        outs = [[] for _ in range(4)]
        clients = [threading.Thread(target=_client, args=(port, lines, out)) for out in outs]
        for c in clients:
            c.start()
        for c in clients:
            c.join()
        for out in outs:
            assert out == want
        bad = []
        _client(port, ["{oops", "y" * 500, lines[0]], bad)
        assert bad[0]["id"] is None and "not valid JSON" in bad[0]["error"]
        assert bad[1] == {"id": None, "error": "request longer than 200 bytes"}
        assert bad[2] == want[0]
    finally:
        proc.terminate()
        assert proc.wait(timeout=30) == 0


def test_serve_port_out_of_range_or_taken_is_one_line(mesh_file, capsys):
    assert main(["serve", str(mesh_file) + ".missing", "--port", "99999"]) == 2
    err = capsys.readouterr().err
    assert err == "regn: --port must be in 0..65535, got 99999\n"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        assert main(["serve", str(mesh_file), "--port", str(port)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"regn: cannot listen on 127.0.0.1:{port}: ")
        # bound before the map is read: said at once, whatever the map
        assert main(["serve", str(mesh_file) + ".missing", "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"regn: cannot listen on 127.0.0.1:{port}: ") and err.count("\n") == 1
