"""regn scan / chunk / diff: finding objects in blobs, inferring layouts, semantic diffs."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
import scipy.spatial

import regn
from regn.cli import main
from regn.format import pof0
from regn.scan.chunkinfo import infer, infer_object
from conftest import random_map
from regn.scan.finder import scan

LO, HI = np.full(3, -5e4), np.full(3, 5e4)


def _points(n=120, seed=0):
    rng = np.random.default_rng(seed)
    corners = np.array(np.meshgrid(*[[-5e4, 5e4]] * 3)).reshape(3, -1).T
    return np.vstack([rng.uniform(LO, HI, (n, 3)), corners])


def make_mesh(n=120, seed=0, drop=0, pts=None, tets=None, **kw):
    pts = _points(n, seed) if pts is None else pts
    tets = scipy.spatial.Delaunay(pts).simplices if tets is None else tets
    if drop:
        tets = tets[drop:]
    return regn.build(pts, tets, bbox=(LO, HI), dims=(5, 5, 5), **kw)


@pytest.fixture(scope="module")
def mesh():
    return make_mesh()


def _test_chunk(n_a=37, n_b=23, order=">"):
    hdr = 32
    a_off = hdr
    b_off = (a_off + 20 * n_a + 15) // 16 * 16
    size = (b_off + 16 * n_b + 15) // 16 * 16
    data = bytearray(size)
    u4 = np.dtype(order + "u4")
    f4 = np.dtype(order + "f4")

    def put(off, val, dt):
        data[off:off + 4] = np.array([val], dtype=dt).tobytes()
    put(0, n_a, u4)
    put(4, n_b, u4)
    put(8, a_off, u4)
    put(12, b_off, u4)
    words = [2, 3]
    rng = np.random.default_rng(1)
    for i in range(n_a):
        r = a_off + 20 * i
        put(r, rng.uniform(-100, 100), f4)
        put(r + 4, rng.uniform(-100, 100), f4)
        put(r + 8, i, u4)
        put(r + 12, b_off + 16 * (i % n_b), u4)
        put(r + 16, 1.0, f4)
        words.append((r + 12) // 4)
    for j in range(n_b):
        r = b_off + 16 * j
        put(r, 7, u4)
        put(r + 4, rng.uniform(0, 1), f4)
        put(r + 8, rng.uniform(1e3, 1e4), f4)
    table = pof0.encode(words)
    size_bytes = np.array([len(data)], dtype=u4).tobytes()
    tsize = np.array([len(table)], dtype=u4).tobytes()
    return (b"TEST" + size_bytes + bytes(8) + bytes(data) + b"POF0" + tsize + bytes(8)
            + table), (a_off, b_off)


def _decoy_bad_table():
    """Structure right up to the table: 'FAKE', a size pointing at 'POF0', but the
    table lists a word outside the data area."""
    data = bytes(64)
    table = pof0.encode([40])          # word 40 = byte 160 > 64
    return (b"FAKE" + (64).to_bytes(4, "big") + bytes(8) + data + b"POF0"
            + len(table).to_bytes(4, "big") + bytes(8) + table)


@pytest.fixture(scope="module")
def blob(mesh):
    rng = np.random.default_rng(7)
    be = mesh.dumps()
    le = mesh.dumps(byte_order="<")
    d4 = mesh.dumps(pof0_dialect=4)
    test, _ = _test_chunk()
    parts, expect = [], []

    def add(b, tag=None, order=None):
        pos = sum(len(p) for p in parts)
        parts.append(b)
        if tag:
            expect.append((pos, tag, order, len(b)))
    add(rng.bytes(1001))
    add(be, "REGN", "big")
    add(le, "REGN", "little")                       # back to back
    add(b"junk REGN and POF0 and REGN\x00\x00\x00\x10POF0 decoys" + rng.bytes(77))
    add(_decoy_bad_table())
    add(rng.bytes(13))
    add(test, "TEST", "big")
    add(d4, "REGN", "big")
    add(rng.bytes(5))
    add(be[:len(be) - 40])                          # cut off at the end
    return b"".join(parts), expect


def test_scan_finds_exactly_the_objects(blob):
    buf, expect = blob
    rejected = []
    found = scan(buf, rejected=rejected)
    assert [(f.offset, f.tag.decode(), "big" if f.byte_order == ">" else "little", f.size)
            for f in found] == expect
    dialects = [f.pof0_dialect for f in found]
    assert dialects == [3, 3, 3, 4]
    assert [f.valid_regn for f in found] == [True, True, None, True]
    # the decoy with a bad table and the truncated object were candidates, and rejected
    reasons = " ".join(r[2] for r in rejected)
    assert any(r[1] == b"FAKE" for r in rejected)
    assert "outside" in reasons


def test_scan_small_window(blob, monkeypatch):
    """Candidates straddling window edges are still found."""
    import regn.scan.finder as finder
    monkeypatch.setattr(finder, "WINDOW", 4099)
    buf, expect = blob
    assert [f.offset for f in scan(buf, validate=False)] == [e[0] for e in expect]


def test_scan_nothing():
    assert scan(b"") == []
    assert scan(b"POF0" * 10) == []
    assert scan(b"REGN" + bytes(12) + b"POF0" + bytes(12)) != []   # empty object is legal


def test_scan_cli_json_and_extract(blob, tmp_path, capsys, mesh):
    buf, expect = blob
    p = tmp_path / "blob.bin"
    p.write_bytes(buf)
    out = tmp_path / "out"
    assert main(["scan", str(p), "--json", "--extract", str(out)]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["offset"] for r in rows] == [e[0] for e in expect]
    assert {"offset", "tag", "size", "data_size", "byte_order", "pof0_dialect",
            "valid_regn"} <= set(rows[0])
    names = sorted(os.listdir(out))
    ext = {"REGN": "rgn", "TEST": "bin"}
    assert names == sorted(f"{e[0]:08x}.{e[1]}.{ext[e[1]]}" for e in expect)
    first = (out / names[0]).read_bytes()
    assert first == buf[expect[0][0]:expect[0][0] + expect[0][3]]
    assert regn.loads(first).n_tets == mesh.n_tets
    # a second extraction never overwrites
    assert main(["scan", str(p), "--extract", str(out)]) == 2
    assert "exists" in capsys.readouterr().err
    assert main(["scan", str(p)]) == 0
    text = capsys.readouterr().out
    assert "4 object(s)" in text and "little" in text


@pytest.mark.parametrize("order", [">", "<"])
def test_chunk_rediscovers_regn_strides(mesh, order):
    info = infer_object(mesh.dumps(byte_order=order))
    regions = info["regions"]
    assert [r["start"] for r in regions] == [0] + [int(x) for x in
                                                   regn.loads(mesh.dumps()).parts.section_offsets]
    assert [r["stride"] for r in regions[1:]] == [12, 96, 48, 8, 32, 4]
    assert [r["count"] for r in regions[1:]] == list(mesh.counts)
    tets = regions[2]
    assert tets["evidence"]["targets_on_boundaries"] == tets["evidence"]["targets"] > 0
    cells, items = regions[4], regions[5]
    assert list(cells["evidence"]["pointer_fields"]) == [4]
    assert list(items["evidence"]["pointer_fields"]) == [0x14]
    # the pointer graph between arrays: cells -> items -> refs -> tets
    assert list(cells["evidence"]["points_to"]) == [items["start"]]
    assert list(items["evidence"]["points_to"]) == [regions[6]["start"]]
    assert list(regions[6]["evidence"]["points_to"]) == [tets["start"]]
    faces = regions[3]["census"]
    w = next(c for c in faces if c["offset"] == 0x1C)
    assert w["float_min"] == w["float_max"] == 1.0
    assert next(c for c in faces if c["offset"] == 0x20).get("note", "").startswith("counts up")


def test_chunk_strides_with_empty_cells():
    pts = _points(200, seed=5)
    tets = scipy.spatial.Delaunay(pts).simplices
    x = pts[tets][:, :, 0]
    cut = make_mesh(pts=pts, tets=tets[~((x.min(axis=1) < 1e4) & (x.max(axis=1) > -1e4))])
    assert (cut.cell_item < 0).any()
    info = infer_object(cut.dumps())
    assert [r["stride"] for r in info["regions"][1:]] == [12, 96, 48, 8, 32, 4]


def test_chunk_made_up_layout():
    buf, (a_off, b_off) = _test_chunk()
    info = infer_object(buf)
    regions = info["regions"]
    assert [r["start"] for r in regions] == [0, a_off, b_off]
    assert [(r["stride"], r["count"]) for r in regions[1:]] == [(20, 37), (16, 23)]
    assert regions[1]["evidence"]["pointer_fields"] == {12: 37}
    assert regions[2]["evidence"]["targets_on_boundaries"] == 23
    le, _ = _test_chunk(order="<")
    assert [r["stride"] for r in infer_object(le)["regions"][1:]] == [20, 16]
    # the pointer map lists every pointer and where it points
    assert {"at": 8, "to": a_off} in info["pointers"]
    assert len(info["pointers"]) == 2 + 37


def test_infer_without_pointer_table():
    """No header table: regions from target gaps; stride from target spacing."""
    data = np.zeros(256, dtype=">u4")
    data[1:11] = 4 * (100 + 8 * np.arange(10))      # ten pointers to 32-byte records
    info = infer(data.tobytes(), np.arange(1, 11), ">")
    r = [x for x in info["regions"] if x["start"] == 400]
    assert r and r[0]["stride"] == 32


def test_chunk_cli(blob, tmp_path, capsys):
    buf, expect = blob
    p = tmp_path / "blob.bin"
    p.write_bytes(buf)
    off = expect[2][0]                       # the TEST chunk
    assert main(["chunk", f"{p}@{off:#x}", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["tag"] == "TEST" and [r["stride"] for r in info["regions"]] == [32, 20, 16]
    assert main(["chunk", f"{p}@{expect[0][0]}"]) == 0
    assert "stride 96" in capsys.readouterr().out
    assert main(["chunk", f"{p}@5"]) == 2


# --- diff ----------------------------------------------------------------------

def _save(tmp_path, name, m):
    path = tmp_path / name
    regn.save(m, path)
    return str(path)


def test_diff_same_and_renumbered(tmp_path, capsys, mesh):
    a = _save(tmp_path, "a.rgn", mesh)
    assert main(["diff", a, a]) == 0
    assert "same mesh" in capsys.readouterr().out
    pts = _points()
    tets = scipy.spatial.Delaunay(pts).simplices
    rng = np.random.default_rng(3)
    shuffled = rng.permutation(tets, axis=0)[:, [1, 0, 3, 2]]
    b = _save(tmp_path, "b.rgn", make_mesh(tets=shuffled))
    assert main(["diff", a, b, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["same"] and d["tets"]["added"] == d["tets"]["removed"] == 0
    le = tmp_path / "le.rgn"
    le.write_bytes(mesh.dumps(byte_order="<"))
    assert main(["diff", a, str(le), "--json"]) == 0
    enc = json.loads(capsys.readouterr().out)["encoding"]
    assert enc["byte_order"] == {"a": "big", "b": "little"}
    assert main(["diff", a, str(le)]) == 0
    assert "encoding byte_order: big -> little" in capsys.readouterr().out
    # two unrelated maps share no tetrahedron: no "0 of 0" count
    other = _save(tmp_path, "other.rgn", random_map(40, seed=8))
    assert main(["diff", a, other]) == 1
    assert "portal costs: not compared (no tetrahedron in common)" in capsys.readouterr().out


def test_diff_moved_vertex(tmp_path, capsys, mesh):
    pts = _points()
    tets = scipy.spatial.Delaunay(pts).simplices
    pts2 = pts.copy()
    pts2[4] += (30.0, -40.0, 0.0)
    a = _save(tmp_path, "a.rgn", mesh)
    b = _save(tmp_path, "b.rgn", make_mesh(pts=pts2, tets=tets))
    assert main(["diff", a, b, "--json"]) == 1
    d = json.loads(capsys.readouterr().out)
    assert d["vertices"]["moved"] == 1
    assert d["vertices"]["max_move"] == pytest.approx(50.0, rel=1e-3)
    assert d["vertices"]["moved_indices"] == [4]
    assert d["tets"]["added"] == d["tets"]["removed"] == 0
    assert d["portal_costs"]["changed"] > 0
    assert "vertices" in d["changes"]


def test_diff_dropped_tet(tmp_path, capsys, mesh):
    a = _save(tmp_path, "a.rgn", mesh)
    b = _save(tmp_path, "b.rgn", make_mesh(drop=1))
    assert main(["diff", a, b, "--json"]) == 1
    d = json.loads(capsys.readouterr().out)
    assert d["tets"]["removed"] == 1 and d["tets"]["added"] == 0
    assert d["tets"]["removed_indices_a"] == [0]
    assert d["faces"]["boundary_b"] > d["faces"]["boundary_a"]
    assert d["faces"]["adjacency_changed"] >= 1
    assert d["components"]["a"]["count"] == d["components"]["b"]["count"] == 1
    assert "components" not in d["changes"] and "tets" in d["changes"]
    assert main(["diff", b, a]) == 1
    out = capsys.readouterr().out
    assert "1 added" in out and "connected component" in out


def test_diff_pocket(tmp_path, capsys):
    """Cutting every tetrahedron that touches a slab leaves two components."""
    pts = _points(200, seed=5)
    tets = scipy.spatial.Delaunay(pts).simplices
    full = make_mesh(pts=pts, tets=tets)
    x = pts[tets][:, :, 0]
    keep = ~((x.min(axis=1) < 1e4) & (x.max(axis=1) > -1e4))
    cut = make_mesh(pts=pts, tets=tets[keep])
    from regn.scan.diff import diff
    d = diff(full, cut)
    assert d["components"]["a"]["count"] == 1
    assert d["components"]["b"]["count"] >= 2
    assert len(d["components"]["b"]["pockets"]) == d["components"]["b"]["count"] - 1
    assert "components" in d["changes"]


def test_diff_unreadable(tmp_path, capsys, mesh):
    a = _save(tmp_path, "a.rgn", mesh)
    bad = tmp_path / "bad.rgn"
    bad.write_bytes(b"REGN" + bytes(40))
    assert main(["diff", a, str(bad)]) == 2
    assert main(["diff", a, str(tmp_path / "missing.rgn")]) == 2


def test_scan_flags_invalid_regn(mesh):
    """Intact chunk structure, broken content: found, but valid_regn is False."""
    raw = bytearray(mesh.dumps())
    tets_at = 0x10 + int(regn.loads(bytes(raw)).parts.section_offsets[1])
    raw[tets_at + 0x10:tets_at + 0x12] = b"\xff\xff"     # vertex index 65535
    found = scan(b"xyz" + bytes(raw))
    assert [(f.offset, f.tag) for f in found] == [(3, b"REGN")]
    assert found[0].valid_regn is False and found[0].notes


def test_progress_only_on_a_tty(capsys):
    import io
    from regn.scan.finder import tty_progress
    assert tty_progress(io.StringIO()) is None

    class Tty(io.StringIO):
        def isatty(self):
            return True
    t = Tty()
    cb = tty_progress(t)
    cb(5, 10)
    cb(10, 10)
    assert "50%" in t.getvalue() and t.getvalue().endswith("\n")


def test_chunk_errors_name_the_file(tmp_path, capsys):
    short = tmp_path / "short.bin"
    short.write_bytes(b"REGN\0\0")
    assert main(["chunk", str(short)]) == 2
    assert capsys.readouterr().err == (f"regn: {short}: offset 0x0: 6 bytes is too short "
                                       "for a chunk header (16 bytes)\n")
    assert main(["chunk", f"{short}@0x99"]) == 2
    assert capsys.readouterr().err == f"regn: {short}: offset 0x99 is not inside the 6-byte file\n"
