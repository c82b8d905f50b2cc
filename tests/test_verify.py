"""regn.verify and ``regn verify``: built maps pass everything; each targeted
corruption of the bytes fails the check it should, with a detail that says
what was seen."""

import json
import struct

import numpy as np
import pytest

import regn
from regn.cli import main
from regn.format import pof0
from regn.format.layout import PORTAL_PAIRS, field_offsets
from regn.checks import VerifyReport, verify
from conftest import random_map

DATA = 0x10
TOP_KEYS = {"path", "ok", "byte_order", "pof0_dialect", "roundtrip_identical", "checks"}
CHECK_KEYS = {"name", "kind", "status", "passed", "total", "detail"}


@pytest.fixture(scope="module")
def base():
    m = random_map(250, seed=7, hole_fraction=0.15, unpinched=True)
    return m, m.dumps()


def offsets(b):
    return regn.loads(b).parts.section_offsets


def patch(b, at, fmt, *values):
    b = bytearray(b)
    struct.pack_into(fmt, b, at, *values)
    return bytes(b)


def unpack(b, at, fmt):
    return struct.unpack_from(fmt, b, at)


def failing(report):
    return {c.name for c in report.checks if c.status == "fail"}


# --- built maps pass every check ---------------------------------------------------

@pytest.mark.parametrize("seed,order,dialect", [(0, ">", 3), (1, "<", 3), (2, ">", 4),
                                                (3, "<", 4), (4, ">", 3)])
def test_built_maps_pass_strict(seed, order, dialect):
    m = random_map(120 + 60 * seed, seed=seed, hole_fraction=0.05 + 0.05 * seed,
                   dims=(10, 8, 6), byte_order=order, pof0_dialect=dialect, unpinched=True)
    b = m.dumps()
    for subject in (m, b, regn.loads(b)):
        r = verify(subject, strict=True)
        assert failing(r) == set(), [c for c in r.checks if c.status == "fail"]
        assert r.ok and r.roundtrip_identical and r.first_difference is None
        assert r.byte_order == ("big" if order == ">" else "little")
        assert r.pof0_dialect == dialect
    names = [c.name for c in r.checks]
    assert len(names) == len(set(names))
    kinds = {c.kind for c in r.checks}
    assert kinds == {"seed", "inferred", "info"}
    assert all(c.status == "info" for c in r.checks if c.kind == "info")
    assert all(c.passed == c.total for c in r.checks if c.kind != "info")


def test_report_dict_schema(base):
    _, b = base
    d = verify(b, path="x.rgn").to_dict()
    assert set(d) == TOP_KEYS
    assert d["path"] == "x.rgn" and d["ok"] is True and d["byte_order"] == "big"
    for c in d["checks"]:
        assert set(c) == CHECK_KEYS
        assert c["kind"] in ("seed", "inferred", "info")
        assert c["status"] in ("pass", "fail", "info")
        assert isinstance(c["passed"], int) and isinstance(c["total"], int)
    json.dumps(d)


def test_api_functions_survive_submodule_imports(base):
    # importing the packages behind regn.verify / regn.build must not shadow them
    import regn.builder.tetmesh  # noqa: F401
    import regn.checks  # noqa: F401
    assert isinstance(regn.verify(base[1]), VerifyReport)
    assert callable(regn.build) and callable(regn.generate)


def test_unreadable_bytes_raise():
    with pytest.raises(regn.FormatError):
        verify(b"REGN\0\0\0\x10" + bytes(8))


# --- targeted corruptions ------------------------------------------------------------

def test_vertex_outside_bbox(base):
    m, b = base
    off = offsets(b)
    v = int(np.argmax(m.vertices[:, 0]))          # push the +x-most vertex out
    bad = patch(b, DATA + off[0] + 12 * v, ">f", 60_000.0)
    r = verify(bad, strict=True)
    c = r["vertices_in_bbox"]
    assert c.status == "fail" and c.kind == "inferred" and c.passed == c.total - 1
    assert f"vertex {v} at [60000," in c.detail
    assert "face_plane_through_tet" in failing(r)   # its faces no longer close
    assert not r.ok


def test_non_unit_normal(base):
    m, b = base
    off = offsets(b)
    f = 11
    at = DATA + off[2] + 48 * f
    n = np.array(unpack(b, at, ">3f")) * 1.25
    bad = patch(b, at, ">3f", *n)
    r = verify(bad)
    c = r["face_normals_unit"]
    assert c.status == "fail" and c.kind == "seed" and c.total - c.passed == 1
    assert f"face {f} |n| = 1.25" in c.detail
    assert not r.ok


def test_broken_adjacency_tet_faces(base):
    m, b = base
    off = offsets(b)
    f_old = 40
    t, slot = (int(x) for x in (m.face_tets[f_old, 0], m.face_slots[f_old, 0]))
    at = DATA + off[1] + 96 * t + field_offsets("tets")["faces"] + 2 * slot
    f_new = (f_old + 17) % m.n_faces
    bad = patch(b, at, ">H", f_new)
    r = verify(bad)
    c = r["face_tet_a_slot"]
    assert c.status == "fail" and c.kind == "seed"
    assert f"face {f_old}: A = tet {t} slot {slot}, which lists face {f_new}" in c.detail
    c = r["face_plane_through_tet"]
    assert c.status == "fail" and f"tet {t} slot {slot} face {f_new}" in c.detail
    assert not r.ok


def test_broken_adjacency_face_b(base):
    m, b = base
    off = offsets(b)
    fo = field_offsets("faces")
    f = int(np.flatnonzero(m.face_tets[:, 1] >= 0)[0])
    at = DATA + off[2] + 48 * f + fo["tet_b"]
    true_b = unpack(b, at, ">I")[0]
    bad = patch(b, at, ">I", (true_b + 1) % m.n_tets)
    r = verify(bad)
    c = r["face_tet_b_slot"]
    assert c.status == "fail" and c.kind == "inferred"
    assert f"face {f} (listed 2x): B = {(true_b + 1) % m.n_tets}" in c.detail
    assert f"expected tet {true_b}" in c.detail
    assert r.ok                                   # seed checks still hold
    assert not verify(bad, strict=True).ok
    # a boundary face that claims a B
    g = int(m.boundary_faces[0])
    bad2 = patch(b, DATA + off[2] + 48 * g + fo["tet_b"], ">I", 0)
    assert f"face {g} (listed 1x)" in verify(bad2)["face_tet_b_slot"].detail


def test_wrong_portal_cost_is_inferred_only(base):
    m, b = base
    off = offsets(b)
    t, p = 9, 4
    at = DATA + off[1] + 96 * t + field_offsets("tets")["portal"] + 8 * p
    cost = unpack(b, at, ">f")[0]
    bad = patch(b, at, ">f", cost * 2 + 100.0)
    r = verify(bad)
    c = r["portal_cost_rule"]
    assert c.status == "fail" and c.kind == "inferred" and c.total - c.passed == 1
    assert f"tet {t} pair {PORTAL_PAIRS[p]}" in c.detail
    assert f"{cost * 2 + 100.0:.7g}" in c.detail
    assert all(x.status != "fail" for x in r.checks if x.kind == "seed")
    assert r.ok and not verify(bad, strict=True).ok
    assert r.to_dict()["ok"] is True


def _replace_pof0(b, words, dialect=3):
    mesh = regn.loads(b)
    fr = mesh.parts.frame
    table = pof0.encode(words, dialect)
    head = bytearray(b[:fr.table_start])
    struct.pack_into(">I", head, fr.pof0_start + 4, len(table))
    return bytes(head) + table


def test_extra_pof0_word(base):
    m, b = base
    words = regn.loads(b).expected_pointer_words()
    extra = 0x80 // 4 + 3                         # vertex 1's x coordinate
    bad = _replace_pof0(b, np.concatenate([words, [extra]]))
    r = verify(bad)
    c = r["pof0_pointer_set"]
    assert c.status == "fail" and c.kind == "seed"
    assert c.passed == len(words) and c.total == len(words) + 1
    assert f"word {extra} ({4 * extra:#x}, vertices[1]+0x0)" in c.detail
    assert not r.ok
    # and a missing one
    bad = _replace_pof0(b, words[words != words[10]])
    c = verify(bad)["pof0_pointer_set"]
    assert c.status == "fail" and "expected pointer words not listed" in c.detail
    assert f"word {int(words[10])}" in c.detail


def test_noncanonical_pof0_is_info(base):
    _, b = base
    words = regn.loads(b).expected_pointer_words()
    bad = _replace_pof0(b, words)
    # pad the table with 4 more zero bytes: legal, not canonical
    fr = regn.loads(bad).parts.frame
    bad = patch(bad, fr.pof0_start + 4, ">I", fr.pof0_size + 4) + bytes(4)
    r = verify(bad, strict=True)
    c = r["pof0_canonical"]
    assert c.status == "info" and c.passed == 0 and "canonical padding" in c.detail
    assert r.ok and not r.roundtrip_identical
    assert r.first_difference is not None and r["roundtrip_identical"].passed == 0


def test_cell_list_missing_a_tet(base):
    m, b = base
    off = offsets(b)
    indptr, _ = m.grid_csr
    cell = int(np.flatnonzero(np.diff(indptr) >= 3)[0])
    tets = m.cell_tets(cell)
    r0 = int(m.item_ref_start[m.cell_item[cell]])
    lost = int(tets[1])
    at = DATA + off[5] + 4 * (r0 + 1)
    bad = patch(b, at, ">I", off[1] + 96 * int(tets[0]))   # duplicate tets[0]
    r = verify(bad)
    c = r["grid_membership_exact"]
    assert c.status == "fail" and c.kind == "inferred"
    assert f"cell {cell} lacks tet {lost}" in c.detail and "1 duplicate" in c.detail
    assert r.ok and not verify(bad, strict=True).ok


def test_cell_lists_a_far_tet(base):
    m, b = base
    off = offsets(b)
    indptr, _ = m.grid_csr
    cell = int(np.flatnonzero(np.diff(indptr) >= 1)[0])
    far = int(np.argmax(np.linalg.norm(m.tet_centres - m.tet_centres[m.cell_tets(cell)[0]],
                                       axis=1)))
    r0 = int(m.item_ref_start[m.cell_item[cell]])
    bad = patch(b, DATA + off[5] + 4 * r0, ">I", off[1] + 96 * far)
    c = verify(bad)["listed_tets_intersect_cell"]
    assert c.status == "fail" and f"cell {cell} lists tet {far}" in c.detail
    # a reference that falls inside a record
    bad = patch(b, DATA + off[5] + 4 * r0, ">I", off[1] + 96 * far + 8)
    c = verify(bad)["refs_on_tet_boundaries"]
    assert c.status == "fail" and f"ref {r0} -> " in c.detail and "+8 into tet" in c.detail


def test_nonzero_sentinel(base):
    m, b = base
    off = offsets(b)
    at = DATA + off[2] + 48 * m.n_faces + 48 + 5
    r = verify(patch(b, at, ">B", 0x7F))
    c = r["face_sentinels"]
    assert c.status == "fail" and c.kind == "seed" and "+0x35=0x7f" in c.detail
    assert not r.ok


def test_nonzero_padding(base):
    m, b = base
    end0 = 0x80 + 12 * m.n_vertices
    if end0 % 16 == 0:
        pytest.skip("no padding after section 0 on this map")
    r = verify(patch(b, DATA + end0, ">B", 0x55), strict=True)
    c = r["padding_zero"]
    assert c.status == "fail" and f"{end0:#x}=0x55" in c.detail and not r.ok


def test_extent_not_cell_times_dims(base):
    _, b = base
    bad = patch(b, DATA + 0x20, ">f", 99_999.0)
    r = verify(bad)
    c = r["header_extent"]
    assert c.status == "fail" and c.kind == "seed" and c.passed == 2 and c.total == 3
    assert "x: extent 99999, max-min 100000, cell*dims 100000" in c.detail
    assert not r.ok


def test_cell_count_and_pointer(base):
    m, b = base
    off = offsets(b)
    cell = int(np.flatnonzero(m.cell_item >= 0)[0])
    r = verify(patch(b, DATA + off[3] + 8 * cell, ">I", 2))
    assert f"cell {cell} count 2" in r["cell_counts"].detail
    assert r["cell_count_pointer"].status == "fail"
    assert not r.ok


def test_inverted_tet_and_bad_centre(base):
    m, b = base
    off = offsets(b)
    t = 4
    at = DATA + off[1] + 96 * t + field_offsets("tets")["verts"]
    v = unpack(b, at, ">4H")
    bad = patch(b, at, ">4H", v[0], v[1], v[3], v[2])
    r = verify(bad)
    c = r["tet_orientation_positive"]
    assert c.status == "fail" and f"tet {t} verts [{v[0]}, {v[1]}, {v[3]}, {v[2]}]" in c.detail
    assert r["tet_volume_nonzero"].status == "pass"
    bad = patch(b, DATA + off[1] + 96 * t, ">f", float(m.tet_centres[t, 0]) + 500.0)
    c = verify(bad)["tet_centre_radius"]
    assert c.status == "fail" and f"tet {t}: centre" in c.detail


# --- the CLI -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def files(base, tmp_path_factory):
    m, b = base
    d = tmp_path_factory.mktemp("verify")
    good = d / "good.rgn"
    good.write_bytes(b)
    off = offsets(b)
    at = DATA + off[2] + 48 * 3
    n = np.array(unpack(b, at, ">3f")) * 2
    seedbad = d / "seedbad.rgn"
    seedbad.write_bytes(patch(b, at, ">3f", *n))
    at = DATA + off[1] + 96 * 2 + field_offsets("tets")["portal"]
    costbad = d / "costbad.rgn"
    costbad.write_bytes(patch(b, at, ">f", 1.0))
    junk = d / "junk.rgn"
    junk.write_bytes(b"REGN" + bytes(40))
    return good, seedbad, costbad, junk


def test_cli_exit_codes(files, capsys):
    good, seedbad, costbad, junk = files
    assert main(["verify", str(good)]) == 0
    out = capsys.readouterr().out
    assert "1 of 1 maps pass" in out and "face_normals_unit" in out
    assert main(["verify", str(good), str(costbad)]) == 0
    assert "2 of 2 maps pass" in capsys.readouterr().out
    assert main(["verify", "--strict", str(good), str(costbad)]) == 1
    out = capsys.readouterr().out
    assert "1 of 2 maps pass" in out and "FAIL" in out
    assert main(["verify", str(seedbad)]) == 1
    assert "FAIL" in capsys.readouterr().out
    assert main(["verify", str(good), str(junk), str(seedbad)]) == 2
    cap = capsys.readouterr()
    err = cap.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"regn: {junk}: offset 0x")
    assert "1 of 3 maps pass, 1 unreadable" in cap.out
    assert str(seedbad) in cap.out                  # checked after the bad one


def test_cli_json(files, capsys):
    good, seedbad, costbad, junk = files
    code = main(["verify", "--json", str(good), str(seedbad), str(junk)])
    assert code == 2
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) == {"files"} and len(doc["files"]) == 3
    g, s, j = doc["files"]
    assert set(g) == TOP_KEYS and g["ok"] is True and g["path"] == str(good)
    assert set(s) == TOP_KEYS and s["ok"] is False
    failed = [c for c in s["checks"] if c["status"] == "fail"]
    assert "face_normals_unit" in {c["name"] for c in failed}
    for c in g["checks"]:
        assert set(c) == CHECK_KEYS
    assert set(j) == {"path", "ok", "error"} and j["ok"] is False
    assert "offset 0x" in j["error"]


def test_check_names_are_the_documented_stable_list(base):
    from regn.checks import CHECKS
    _, b = base
    assert [(c.name, c.kind) for c in verify(b).checks] == list(CHECKS)
    # a table that decodes in neither dialect: same list, pof0 checks fail
    bad = _replace_pof0(b, [1])
    fr = regn.loads(bad).parts.frame
    bad = bad[:fr.table_start] + bytes([0x41, 0x40, 0, 0])   # delta 1 then delta 0
    r = verify(bad)
    assert [(c.name, c.kind) for c in r.checks] == list(CHECKS)
    assert r["pof0_decodes"].status == "fail" and "delta 0" in r["pof0_decodes"].detail
    assert r["pof0_pointer_set"].status == "fail" and r.pof0_dialect is None
    assert not r.ok


def _brute_force_membership(pts, bbox_min, cell_size, dims):
    """Every (cell, tet) pair through the full separating-axis test."""
    from geometry_reference import tets_intersect_boxes
    from regn.geometry import cell_bounds
    from regn.tolerances import TOUCH_REL
    n_c = int(np.prod(dims))
    eps = TOUCH_REL * float(np.max(cell_size * np.array(dims)))
    # only pairs whose bounding boxes come within 4 eps of each other: a looser
    # test than the separating-axis test's own three box axes, so the same
    # pairs (it only spares the reference the pairs far apart)
    c_lo, c_hi = cell_bounds(np.arange(n_c), bbox_min, cell_size, dims)
    t_lo, t_hi = pts.min(axis=1), pts.max(axis=1)
    near = ((t_lo[None] <= c_hi[:, None] + 4 * eps)
            & (t_hi[None] >= c_lo[:, None] - 4 * eps)).all(axis=2)
    cells, tets = np.nonzero(near)
    lo, hi = c_lo[cells], c_hi[cells]
    hit = tets_intersect_boxes(pts[tets], lo, hi, eps)
    return cells[hit], tets[hit]


def _snapped_map(seed, dims, step):
    """Vertices on a lattice of ``step`` cells: tets touching cell faces,
    edges and corners exactly."""
    from scipy.spatial import Delaunay
    from conftest import H, box_corners
    rng = np.random.default_rng(seed)
    cell = 2 * H / np.asarray(dims, float)
    pts = np.round(rng.uniform(-H, H, (60, 3)) / (cell * step)) * (cell * step)
    pts = np.unique(np.concatenate([box_corners(H), np.clip(pts, -H, H)]), axis=0)
    tets = Delaunay(pts).simplices
    p = pts[tets]
    vol = np.abs(np.einsum("ij,ij->i", np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0]),
                           p[:, 3] - p[:, 0]))
    from regn.builder.unpinch import unpinch      # dropping flat ones pinches
    tets = unpinch(pts, tets[vol > 1e-9 * vol.max()])[0]
    return regn.build(pts, tets, bbox=(-H * np.ones(3), H * np.ones(3)), dims=dims)


@pytest.mark.parametrize("seed,dims", [(2, (10, 10, 10)), (9, (7, 5, 3)), (4, (1, 1, 1))])
def test_grid_membership_matches_brute_force(seed, dims):
    """The shortcut-taking grid rule gives exactly the pairs the full
    separating-axis test gives on every (cell, tet) pair."""
    from regn.geometry import grid_membership
    m = random_map(150, seed=seed, dims=dims)
    want = _brute_force_membership(m.tet_points, m.bbox_min, m.cell_size, m.dims)
    got = grid_membership(m.tet_points, m.bbox_min, m.cell_size, m.dims)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    assert len(want[0])


@pytest.mark.parametrize("seed,dims,step", [(1, (6, 6, 6), 1.0), (2, (5, 4, 6), 0.5),
                                            (5, (4, 4, 4), 0.25)])
def test_grid_membership_touching_cases(seed, dims, step):
    """Vertices on cell planes (tets touching cell faces, edges and corners
    exactly): the kernel, the numpy rule and the brute force agree."""
    from geometry_reference import grid_membership_reference
    from regn.geometry import grid_membership
    m = _snapped_map(seed, dims, step)
    args = (m.tet_points, m.bbox_min, m.cell_size, m.dims)
    fast = grid_membership(*args)
    slow = grid_membership_reference(*args)
    want = _brute_force_membership(*args)
    for got in (fast, slow):
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    assert verify(m, strict=True).ok


def test_grid_membership_hostile_inputs():
    """NaN / inf / huge coordinates and a grid they overflow: no crash, no
    hang, the kernel agrees with the numpy rule; the work stays on the
    clipped cell ranges."""
    from geometry_reference import grid_membership_reference
    from regn.geometry import grid_membership
    m = random_map(80, seed=3, dims=(6, 5, 4))
    pts = m.tet_points.copy()
    pts[0, 0] = np.nan
    pts[1, 2, 1] = np.inf
    pts[2] = [[-1e300, 0, 0], [1e300, 1, 0], [0, 1e300, 0], [0, 0, -1e300]]
    pts[3] *= 1e30
    pts[4, 1] = [np.nan, np.inf, -np.inf]
    for bbox_min, cell in ((m.bbox_min, m.cell_size),
                           (m.bbox_min * 1e290, m.cell_size * 1e290),
                           (m.bbox_min, np.array([1e-300, 1.0, 1e300]))):
        with np.errstate(all="ignore"):
            slow = grid_membership_reference(pts, bbox_min, cell, m.dims)
        with np.errstate(all="ignore"):
            fast = grid_membership(pts, bbox_min, cell, m.dims)
        assert np.array_equal(fast[0], slow[0]) and np.array_equal(fast[1], slow[1])


def test_trivial_map_passes_strict(trivial_map):
    # vertices on cell corners: every touching case of the grid rule
    r = verify(trivial_map, strict=True)
    assert r.ok and failing(r) == set() and r.roundtrip_identical
    assert r.pof0_dialect == 3 and "both dialects" in r.pof0_note


# --- the boundary is a closed 2-manifold; no two tetrahedra overlap --------------

def test_pinches_are_measured_never_required():
    # a pinch is the mesh's quality, not a reading of the format (issue 28)
    pinched = random_map(250, seed=7, hole_fraction=0.15)
    r = verify(pinched, strict=True)
    assert r.ok and failing(r) == set()
    edges = r["boundary_no_pinch_edges"]
    assert edges.kind == edges.status == "info" and 0 < edges.total - edges.passed < edges.total
    assert "boundary edges not in exactly two boundary triangles" in edges.detail
    assert r.quality["pinch edges"].count == edges.total - edges.passed


def test_overlapping_tetrahedra_fail_strict_verify(base):
    # an interior vertex moved through its neighbours: the tetrahedra around
    # it fold over others (as a writer with a bug, or a hand-edited file, would)
    m, b = base
    tets = m.tets
    interior = np.setdiff1d(np.arange(m.n_vertices), np.unique(m.face_vertices[m.boundary_faces]))
    v = int(interior[0])
    across = m.vertices[v] + 3 * (m.vertices[tets[np.any(tets == v, axis=1)]].mean(axis=(0, 1))
                                  - m.vertices[v]) + 4000.0
    bad = patch(b, DATA + offsets(b)[0] + 12 * v, ">3f", *np.clip(across, -4.9e4, 4.9e4))
    r = verify(bad, strict=True)
    c = r["tets_do_not_overlap"]
    assert c.status == "fail" and c.kind == "inferred" and c.passed < c.total
    assert "pairs of tetrahedra overlapping by more than 0.1 m" in c.detail
    assert r.quality["pinch edges"].count == 0                 # topology unchanged
    assert verify(b, strict=True)["tets_do_not_overlap"].status == "pass"


def test_an_overlap_test_past_its_budget_fails_as_not_decided(base, monkeypatch):
    import regn.geometry.overlap as ov
    m, b = base
    monkeypatch.setattr(ov, "WORK_PER_TET", 0)
    monkeypatch.setattr(ov, "WORK_BASE", 10)
    r = verify(b, strict=True)
    c = r["tets_do_not_overlap"]
    assert c.status == "fail" and not r.ok and c.passed < c.total
    assert c.detail.startswith("not decided: the test stopped when its work budget ran out")


def test_verify_takes_a_path_like_the_cli(tmp_path):
    m = random_map(80, seed=9)
    path = tmp_path / "m.rgn"
    regn.save(m, path)
    for given in (str(path), path):
        report = verify(given)
        assert report.ok and report.path == str(path)
        assert [c.status for c in report.checks] == [c.status for c in verify(m).checks]
    with pytest.raises(regn.RegnError, match="missing.rgn"):
        verify(tmp_path / "missing.rgn")
    with pytest.raises(TypeError, match="a regn.Mesh, REGN bytes or a file's path, not int"):
        verify(3)
