"""The format core: the trivial map by hand, round trips, POF0, byte orders."""

import itertools
import struct

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import regn
from regn.format import pof0
from regn.format.layout import NO_TET, NO_SLOT
from conftest import assert_numba_not_imported, random_map

H = 250_000.0


# --- the trivial map, field by field against values worked out by hand -------------

def test_trivial_counts_and_header(trivial_map):
    m = trivial_map
    assert m.counts[:4] == (8, 6, 18, 1000)
    assert m.dims == (10, 10, 10)
    np.testing.assert_array_equal(m.bbox_min, [-H] * 3)
    np.testing.assert_array_equal(m.bbox_max, [H] * 3)
    np.testing.assert_array_equal(m.cell_size, [50_000.0] * 3)
    np.testing.assert_array_equal(m.extent, [2 * H] * 3)
    b = m.dumps()
    assert b[:4] == b"REGN" and b[8] == 0
    data_size = struct.unpack(">I", b[4:8])[0]
    assert b[16 + data_size:16 + data_size + 4] == b"POF0"
    w_min, w_max = struct.unpack(">f", b[16 + 12:16 + 16])[0], struct.unpack(">f", b[16 + 28:16 + 32])[0]
    assert (w_min, w_max) == (1.0, 1.0)
    assert struct.unpack(">I", b[16 + 0x60:16 + 0x64])[0] == 0x80   # section 0 at 0x80


def test_trivial_orientation_and_faces(trivial_map):
    m = trivial_map
    # tet 1 = [0,1,5,7] comes the wrong way round: its last two vertices swap.
    assert m.tets[0].tolist() == [0, 1, 3, 7]
    assert m.tets[1].tolist() == [0, 1, 7, 5]
    np.testing.assert_allclose(m.tet_volumes, (2 * H) ** 3 / 6)
    # face 0 is tet 0's slot 0, opposite vertex 0: vertices 1, 3, 7, the plane x = +H.
    np.testing.assert_allclose(m.face_normals[0], [1, 0, 0], atol=1e-7)
    assert m.face_d[0] == pytest.approx(-H)
    np.testing.assert_allclose(m.face_points[0], [H, H / 3, -H / 3], rtol=1e-6)
    assert m.face_tets[0].tolist() == [0, -1] and m.face_slots[0].tolist() == [0, -1]
    raw = m.sections["faces"]
    assert raw["tet_b"][0] == NO_TET and raw["slot_b"][0] == NO_SLOT
    # face 1: opposite vertex 0 of tet 0 is vertex 1 -> face (0, 3, 7) on the plane
    # x = y, shared with tet 2 = [0, 2, 3, 7]; the normal leaves tet 0 toward x < y.
    np.testing.assert_allclose(m.face_normals[1], [-2 ** -0.5, 2 ** -0.5, 0], atol=1e-7)
    assert abs(m.face_d[1]) < 1e-6 * H
    assert m.face_tets[1].tolist() == [0, 2]
    assert raw["own"].tolist() == list(range(18))
    assert len(m.boundary_faces) == 12  # two triangles on each cube face
    # all six tetrahedra share the diagonal 0-7: each has two neighbours
    assert ((m.neighbors >= 0).sum(axis=1) == 2).all()


def test_trivial_portal_costs_centres(trivial_map):
    m = trivial_map
    # pair (0,1) of tet 0: centroids (H, H/3, -H/3) and (H/3, H/3, -H/3) -> 2H/3;
    # face 0 is on the boundary, so aux is 0.
    assert m.portal_costs[0, 0, 0] == pytest.approx(2 * H / 3, rel=1e-6)
    assert m.portal_costs[0, 0, 1] == 0.0
    np.testing.assert_allclose(m.tet_centres[0], [H / 2, 0, -H / 2], atol=1e-2)
    assert m.tet_radii[0] == pytest.approx(np.linalg.norm([1.5 * H, H, 0.5 * H]), rel=1e-6)
    # interior-interior pair: aux == cost
    interior = ~np.isin(m.tet_faces, m.boundary_faces)
    pairs = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    for t in range(6):
        for p, (i, j) in enumerate(pairs):
            if interior[t, i] and interior[t, j]:
                assert m.portal_costs[t, p, 1] == m.portal_costs[t, p, 0]
            else:
                assert m.portal_costs[t, p, 1] == 0.0


def _tets_meeting_cell(i, j, k):
    """The six tetrahedra are the orderings of (u_x, u_y, u_z) in the cube; a
    closed cell [i,i+1]x[j,j+1]x[k,k+1] (in cell units) meets the ordering
    a >= b >= c iff max(lo_b, lo_c) <= min(hi_b, hi_a) and lo_c <= hi_a."""
    lo = {"x": i, "y": j, "z": k}
    order_of_tet = ["xyz", "xzy", "yxz", "yzx", "zxy", "zyx"]
    hits = []
    for t, (a, b, c) in enumerate(order_of_tet):
        if max(lo[b], lo[c]) <= min(lo[b] + 1, lo[a] + 1) and lo[c] <= lo[a] + 1:
            hits.append(t)
    return hits


def test_trivial_grid_lists_exactly_the_tets_meeting_each_cell(trivial_map):
    m = trivial_map
    total = 0
    for k, j, i in itertools.product(range(10), repeat=3):
        cell = (k * 10 + j) * 10 + i
        want = _tets_meeting_cell(i, j, k)
        assert m.cell_tets(cell).tolist() == want, (i, j, k)
        total += len(want)
    assert m.n_refs == total == 1968
    assert m.n_items == 1000


# --- round trips ---------------------------------------------------------------------

def _arrays(m):
    names = ["vertices", "tets", "tet_faces", "neighbors", "face_normals", "face_d",
             "face_points", "face_tets", "face_slots", "portal_costs", "tet_centres",
             "tet_radii", "bbox_min", "bbox_max", "cell_size", "cell_item",
             "item_ref_start", "ref_tet"]
    return {n: getattr(m, n) for n in names}


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("order", [">", "<"])
@pytest.mark.parametrize("dialect", [3, 4])
def test_roundtrip(seed, order, dialect):
    m = random_map(250, seed=seed, hole_fraction=0.15, byte_order=order,
                   pof0_dialect=dialect)
    b = m.dumps()
    m2 = regn.loads(b)
    assert m2.byte_order == order
    for name, arr in _arrays(m).items():
        np.testing.assert_array_equal(getattr(m2, name), arr, err_msg=name)
    assert m2.dumps() == b
    # the object has long POF0 entries, so the dialect is detectable
    assert m2.pof0_dialect == dialect


def test_byte_orders_hold_the_same_mesh(small_map):
    be = small_map.dumps(byte_order=">")
    le = small_map.dumps(byte_order="<")
    assert be != le
    m_le = regn.loads(le)
    assert m_le.byte_order == "<"
    assert m_le.dumps(byte_order=">") == be
    # the POF0 table is a big-endian byte stream in both orders
    size_be = struct.unpack(">I", be[4:8])[0]
    size_le = struct.unpack("<I", le[4:8])[0]
    assert size_be == size_le
    assert be[16 + size_be + 16:] == le[16 + size_le + 16:]


def test_save_is_atomic_and_keeps_trailer(tmp_path, small_map):
    path = tmp_path / "m.rgn"
    regn.save(small_map, path)
    data = path.read_bytes() + b"TRAILER!"
    path.write_bytes(data)
    m = regn.load(path)
    assert m.trailer == b"TRAILER!"
    regn.save(m, tmp_path / "again.rgn")
    assert (tmp_path / "again.rgn").read_bytes() == data
    assert sorted(p.name for p in tmp_path.iterdir()) == ["again.rgn", "m.rgn"]
    with pytest.raises(regn.RegnError, match="exists"):
        regn.save(m, path, overwrite=False)


def test_unknown_fields_survive(small_map):
    """[unknown] words are kept bit-for-bit, even NaN patterns."""
    b = bytearray(small_map.dumps())
    d0 = 16
    b[d0 + 0x2C:d0 + 0x30] = b"\x7f\xc0\x12\x34"      # extent w
    b[d0 + 0x78:d0 + 0x80] = bytes(range(1, 9))       # reserved words
    tets_at = struct.unpack(">I", b[d0 + 0x64:d0 + 0x68])[0]
    b[d0 + tets_at + 0x50:d0 + tets_at + 0x58] = b"\x00\x00\x00\x07\x00\x00\x00\x09"
    b[9:16] = bytes([1, 2, 3, 4, 5, 6, 7])           # chunk reserved
    m = regn.loads(bytes(b))
    assert m.dumps() == bytes(b)


# --- POF0 ----------------------------------------------------------------------------

@pytest.mark.parametrize("dialect", [3, 4])
def test_pof0_entry_length_boundaries(dialect):
    long_max = (1 << (8 * dialect - 2)) - 1
    for delta, length in [(1, 1), (63, 1), (64, 2), (16383, 2), (16384, dialect),
                          (long_max, dialect)]:
        table = pof0.encode([delta], dialect)
        assert table[0] >> 6 == {1: 1, 2: 2}.get(length, 3)
        assert len(table) == (length + 3) // 4 * 4
        assert pof0.decode(table, dialect).words.tolist() == [delta]
    with pytest.raises(ValueError):
        pof0.encode([long_max + 1], dialect)


def test_pof0_dialects_differ_only_on_long_entries():
    t3 = pof0.encode([5, 70, 20000], 3)
    t4 = pof0.encode([5, 70, 20000], 4)
    assert t3 != t4
    assert pof0.decode(t4, 4).words.tolist() == [5, 70, 20000]
    short = pof0.encode([5, 70, 1000], 3)
    assert short == pof0.encode([5, 70, 1000], 4)


@settings(max_examples=200, deadline=None)
@given(st.sets(st.integers(1, (1 << 22) - 1), max_size=60), st.sampled_from([3, 4]))
def test_pof0_roundtrip_property(words, dialect):
    table = pof0.encode(sorted(words), dialect)
    assert len(table) % 4 == 0
    t = pof0.decode(table, dialect)
    assert t.words.tolist() == sorted(words)
    assert t.canonical


def test_pof0_non_canonical_is_read_and_flagged():
    table = bytes([0x80, 0x05, 0x41, 0x00])   # delta 5 spelt long, then delta 1
    t = pof0.decode(table, 3)
    assert t.words.tolist() == [5, 6] and not t.canonical


@pytest.mark.parametrize("table,match", [
    (bytes([0x41, 0x40, 0, 0]), "twice"),
    (bytes([0x40, 0, 0, 0]), "delta 0"),
    (bytes([0xC0, 0x01]), "needs 3 bytes"),
])
def test_pof0_malformed(table, match):
    with pytest.raises(regn.FormatError, match=match):
        pof0.decode(table, 3)


def test_pof0_outside_data_area():
    with pytest.raises(regn.FormatError, match="outside"):
        pof0.decode(pof0.encode([10, 500]), 3, data_words=100)


def test_relocate_adds_base_except_null():
    data = struct.pack(">4I", 7, 0x80, 0, 0x10)
    out = pof0.relocate(data, [1, 2, 3], 0x1000)
    assert out.tolist() == [7, 0x1080, 0, 0x1010]


# --- builder refusals ----------------------------------------------------------------

def test_build_refuses_degenerate_and_nonmanifold():
    pts = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [2, 2, 0], [0, 0, 1], [0, 0, -1],
                    [0.1, 0.1, 0.5]], float) * 1000
    with pytest.raises(regn.BuildError, match="degenerate"):
        regn.build(pts, [[0, 1, 2, 3]])
    # three tetrahedra on the face (0,1,2)
    with pytest.raises(regn.BuildError, match="non-manifold"):
        regn.build(pts, [[0, 1, 2, 4], [0, 1, 2, 5], [0, 1, 2, 6]])
    with pytest.raises(regn.BuildError, match="repeats a vertex"):
        regn.build(pts, [[0, 1, 1, 4]])
    with pytest.raises(regn.BuildError, match="indices"):
        regn.build(pts, [[0, 1, 2, 9]])


def test_build_refuses_counts_past_u16():
    pts = np.random.default_rng(0).uniform(0, 1000, (70_000, 3))
    with pytest.raises(regn.LimitError, match="70000 vertices"):
        regn.build(pts, [[0, 1, 2, 3]])
    from conftest import box_corners
    tets = np.array([[0, 1, 3, 7], [0, 1, 5, 7], [0, 2, 3, 7], [0, 2, 6, 7],
                     [0, 4, 5, 7], [0, 4, 6, 7]])
    with pytest.raises(regn.LimitError, match="grid cells"):
        regn.build(box_corners(), tets, dims=(50, 50, 50))


def test_build_default_grid_follows_disc_conventions():
    from conftest import box_corners
    tets = np.array([[0, 1, 3, 7], [0, 1, 5, 7], [0, 2, 3, 7], [0, 2, 6, 7],
                     [0, 4, 5, 7], [0, 4, 6, 7]])
    m = regn.build(box_corners(50_000), tets)
    assert m.dims == (10, 10, 10) and m.cell_size.tolist() == [10_000.0] * 3
    m = regn.build(box_corners(25_000), tets)
    assert m.dims == (5, 5, 5)
    # an awkward box is widened until max - min == cell x dims exactly in float32,
    # by a few float32 steps around the stored (float32) positions
    m = regn.build(box_corners(12_345.678), tets, dims=(3, 3, 3))
    assert np.all(m.bbox_max - m.bbox_min == m.cell_size * np.array(m.dims))
    assert np.all(m.bbox_min <= m.vertices.min(axis=0))
    assert np.all(m.bbox_max >= m.vertices.max(axis=0))
    assert np.allclose(m.bbox_min, -12_345.678, atol=0.01)
    assert np.allclose(m.bbox_max, 12_345.678, atol=0.01)
    assert "box moved so that 3x3x3 float32 cells" in m.build_report["box_change"]
    # left to choose, regn takes a grid that keeps the box as it is: a box
    # smaller than any stage (24.7 km) gets cells under a tenth of its side
    # (10 would move the box; 8 keeps it)
    m = regn.build(box_corners(12_345.678), tets)
    assert m.dims == (8, 8, 8) and m.build_report["box_change"] is None
    assert np.all(m.bbox_max - m.bbox_min == m.cell_size * np.array(m.dims))
    # a 100 m room: 10 m cells, not one 10 km cell
    m = regn.build(box_corners(50.0), tets)
    assert m.dims == (10, 10, 10) and m.cell_size.tolist() == [10.0] * 3


def test_build_is_deterministic():
    a = random_map(200, seed=5).dumps()
    b = random_map(200, seed=5).dumps()
    assert a == b


def test_stale_temp_files_of_killed_writers_are_swept(tmp_path, small_map):
    import os
    import time
    old = tmp_path / ".m.rgn.abc123.tmp"
    fresh = tmp_path / ".m.rgn.def456.tmp"
    old.write_bytes(b"partial")
    fresh.write_bytes(b"partial")
    past = time.time() - 3600
    os.utime(old, (past, past))
    regn.save(small_map, tmp_path / "m.rgn")
    assert not old.exists()          # left by a writer killed an hour ago
    assert fresh.exists()            # may belong to a writer still running


def test_light_cli_commands_do_not_import_numba(tmp_path):
    """``regn.load``, ``regn info`` (which decodes the POF0 table to report
    its dialect) and ``regn --help`` stay fast: no numba import."""
    path = tmp_path / "m.rgn"
    regn.save(random_map(20, seed=1, pof0_dialect=4), path)
    assert_numba_not_imported(
        "from regn.cli import main\n"
        "import regn\n"
        f"regn.load({str(path)!r}).vertices\n"
        f"assert main(['info', {str(path)!r}]) == 0\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n")
