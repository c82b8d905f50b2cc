"""The wall search (distance_to_wall / nearest): the compiled BVH kernel and
the numpy piece search give the same answers, exact against brute force, on
walls that are huge, tiny, flat or corrupted; the BVH's boxes hold what they
claim."""

import json

import numpy as np
import pytest

import regn
from regn.query import nearest as nq
from regn.query.nearest import closest_on_triangles

from conftest import H, assert_numba_not_imported, random_map, run_without_numba
from test_query import L, _make

numba = pytest.importorskip("numba")


@pytest.fixture(scope="module")
def holes():
    return _make(300, seed=5, holes=5)[0]


@pytest.fixture(scope="module")
def field():
    from regn.builder.generate import demo_field, generate
    bbox, obs = demo_field(seed=3, n=12)
    return generate(bbox, obs, dims=(6, 6, 6), coverage_samples=0)


def _points(mesh, n, seed):
    """Inside the volume, in the box +30 % (in holes / asteroids and out),
    and far away."""
    rng = np.random.default_rng(seed)
    lo, hi = np.asarray(mesh.bbox_min, float), np.asarray(mesh.bbox_max, float)
    mid, half = (lo + hi) / 2, (hi - lo) / 2
    return np.vstack([mesh.random_points(n, seed=seed),
                      mid + rng.uniform(-1.3, 1.3, (n, 3)) * half,
                      mid + rng.normal(size=(n // 10, 3)) * 1e7])


def _brute(tri, pts):
    """Distance from each point to every triangle (exact, slow)."""
    out = np.empty(len(pts))
    for i, p in enumerate(pts):
        x = closest_on_triangles(np.repeat(p[None], len(tri), 0), tri)
        with np.errstate(over="ignore", invalid="ignore"):
            d = np.linalg.norm(x - p, axis=1)
        out[i] = np.nanmin(np.where(np.isnan(d), np.inf, d)) if len(d) else np.inf
    return out


def _check_same(mesh, pts):
    """BVH vs pieces: same distances; a different row only on a tie; each
    returned point lies on its row's triangle at the returned distance."""
    tri = nq._wall_tris(mesh)["tri"].astype(np.float64)
    x1, d1, r1 = nq._nearest_wall_bvh(mesh, pts)
    _, d2, r2 = nq._nearest_wall_pieces(mesh, pts)
    np.testing.assert_allclose(d1, d2, rtol=1e-9, atol=1e-6)
    ok = r1 >= 0
    assert np.all(r2[ok] >= 0)
    diff = ok & (r1 != r2)
    for r in (r1, r2):
        x = closest_on_triangles(pts[diff], tri[r[diff]])
        np.testing.assert_allclose(np.linalg.norm(x - pts[diff], axis=1), d1[diff],
                                   rtol=1e-9, atol=1e-6)
    on = closest_on_triangles(x1[ok], tri[r1[ok]])
    np.testing.assert_allclose(on, x1[ok], rtol=0, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(x1[ok] - pts[ok], axis=1), d1[ok],
                               rtol=1e-9, atol=1e-6)
    return d1, r1


@pytest.mark.parametrize("which", ["holes", "field"])
def test_bvh_matches_pieces_and_brute_force(which, request):
    mesh = request.getfixturevalue(which)
    pts = _points(mesh, 1500, seed=21)
    d, r = _check_same(mesh, pts)
    assert np.all(r >= 0) and np.all(np.isfinite(d))
    sel = np.random.default_rng(1).choice(len(pts), 120, replace=False)
    tri = nq._wall_tris(mesh)["tri"].astype(np.float64)
    np.testing.assert_allclose(d[sel], _brute(tri, pts[sel]), rtol=1e-9, atol=1e-6)
    # the public queries go through the compiled kernel
    assert nq._kernels()["compiled"] is True
    np.testing.assert_array_equal(mesh.distance_to_wall(pts), d)


def test_plain_python_kernel_is_the_compiled_one(field):
    """The kernel's Python source, run uncompiled, gives the very same bits."""
    pts = _points(field, 60, seed=3)
    a = nq._nearest_wall_bvh(field, pts)
    b = nq._nearest_wall_bvh(field, pts, kernel=nq._bvh_nearest)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)


@pytest.mark.parametrize("which", ["holes", "field"])
def test_points_on_the_walls(which, request):
    mesh = request.getfixturevalue(which)
    tri = nq._wall_tris(mesh)["tri"].astype(np.float64)
    rng = np.random.default_rng(4)
    rows = rng.choice(len(tri), min(len(tri), 150), replace=False)
    T = tri[rows]
    verts = T.reshape(-1, 3)
    t = rng.uniform(size=(len(T), 1))
    edges = np.vstack([T[:, 0] + t * (T[:, 1] - T[:, 0]), T[:, 1] + t * (T[:, 2] - T[:, 1]),
                       (T[:, 0] + T[:, 1]) / 2])
    faces = np.einsum("nk,nkd->nd", rng.dirichlet(np.ones(3), len(T)), T)
    d_v, _ = _check_same(mesh, verts)
    assert np.all(d_v == 0)                         # a vertex is its own closest point
    for pts in (edges, faces):
        d, _ = _check_same(mesh, pts)
        assert d.max() < 1e-9 * L                   # rounding of the point itself only
    np.testing.assert_array_equal(mesh.distance_to_wall(verts), 0.0)


def test_far_and_overflowing_points(field):
    pts = np.array([[1e12, 0, 0], [0, -3e15, 2e15], [1e160, 0, 0], [-1e200, 1e200, 0]])
    _, d, r = nq._nearest_wall_bvh(field, pts)
    assert np.all(np.isfinite(d[:2])) and np.all(r[:2] >= 0)
    assert np.all(np.isinf(d[2:])) and np.all(r[2:] == -1)     # squares overflow
    np.testing.assert_allclose(d, nq._nearest_wall_pieces(field, pts)[1], rtol=1e-9)
    nr = field.nearest(pts)
    assert np.all(nr.tets[:2] >= 0) and np.all(nr.tets[2:] == -1)
    assert np.all(np.isnan(nr.points[2:]))
    dw = field.distance_to_wall(np.vstack([pts, [[np.nan, 0, 0], [np.inf, 0, 0]]]))
    assert np.all(np.isinf(dw[2:4])) and np.all(np.isnan(dw[4:]))
    # far from small triangles, the closest-point formula's denominators can
    # round to 0: answered all the same, compiled and in Python
    rng = np.random.default_rng(5)
    far = rng.normal(size=(400, 3)) * 10.0 ** rng.uniform(6, 16, (400, 1))
    d, r = _check_same(field, far)
    assert np.all(r >= 0)
    sub = nq._nearest_wall_bvh(field, far[:60], kernel=nq._bvh_nearest)
    np.testing.assert_array_equal(sub[1], d[:60])


def _patched(mesh, moves):
    """The mesh's file with vertices moved (v, xyz), loaded back: a file the
    builder would not write (its flat walls), as in test_degenerate.py."""
    built = regn.loads(mesh.dumps())
    data = bytearray(mesh.dumps())
    for v, xyz in moves:
        at = built.parts.frame.data_start + built.parts.section_offsets[0] + 12 * int(v)
        data[at:at + 12] = np.asarray(xyz, ">f4").tobytes()
    return regn.loads(bytes(data))


def test_zero_area_walls():
    """Boundary faces collapsed to a segment and to a point, in a loaded file."""
    m = random_map(60, seed=3, hole_fraction=0.15, dims=(4, 4, 4))
    V = m.vertices
    corner = np.all(np.isclose(np.abs(V), H), axis=1)
    fv = m.face_vertices[m.boundary_faces]
    free = np.flatnonzero(~corner[fv].any(axis=1))
    (a, b, c), (e, f, g) = fv[free[0]], fv[free[-1]]
    moves = [(c, V[a] + 0.25 * (V[b] - V[a]))]        # on edge ab: a segment
    if len({e, f, g} & {a, b, c}) == 0:
        moves += [(f, V[e]), (g, V[e])]                # a point
    z = _patched(m, moves)
    tri = nq._wall_tris(z)["tri"].astype(np.float64)
    area = np.linalg.norm(np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]), axis=1)
    assert (area < 1e-6 * H * H).sum() >= 2
    bvh = nq._wall_bvh(z)
    assert bvh["flat"].sum() >= (area == 0).sum()
    near = tri[area < 1e-6 * H * H].reshape(-1, 3)
    rng = np.random.default_rng(2)
    pts = np.vstack([_points(z, 400, seed=8), near, near + rng.normal(size=near.shape) * 50])
    d, _ = _check_same(z, pts)
    np.testing.assert_allclose(d, _brute(tri, pts), rtol=1e-9, atol=1e-6)
    assert np.all(d[len(pts) - 2 * len(near):len(pts) - len(near)] == 0)


def test_non_finite_walls_are_never_chosen(field):
    """The reader refuses NaN/inf vertices, so such walls are put into the
    wall cache by hand here (a defence in depth): they are skipped, and
    walls at 1e300 overflow to no answer, in both searches."""
    m = regn.loads(field.dumps())
    w = nq._wall_tris(m)
    tri = w["tri"].astype(np.float64).copy()
    bad = np.arange(0, len(tri), 7)
    tri[bad[0::3], 0, 0] = np.nan
    tri[bad[1::3], 1, 2] = np.inf
    tri[bad[2::3]] *= 1e296                       # finite, squares overflow
    w["tri"] = tri
    pts = _points(m, 400, seed=12)
    d, r = _check_same(m, pts)
    assert not np.isin(r, bad).any() and np.all(r >= 0)
    good = np.setdiff1d(np.arange(len(tri)), bad)
    sel = np.random.default_rng(0).choice(len(pts), 60, replace=False)
    np.testing.assert_allclose(d[sel], _brute(tri[good], pts[sel]), rtol=1e-9, atol=1e-6)
    finite = np.flatnonzero(np.isfinite(tri).all(axis=(1, 2)))
    assert sorted(nq._wall_bvh(m)["row"].tolist()) == finite.tolist()
    # nothing finite at all: no answer, no crash
    w["tri"] = np.full_like(tri, np.nan)
    nq.scratch(m).pop("wall_bvh")
    nq.scratch(m).pop("walls", None)
    for f in (nq._nearest_wall_bvh, nq._nearest_wall_pieces):
        x, d, r = f(m, pts[:5])
        assert np.all(np.isnan(x)) and np.all(np.isinf(d)) and np.all(r == -1)


def test_no_walls():
    b = nq._build_bvh(np.zeros((0, 3, 3)))
    assert b is None
    m = regn.loads(random_map(30, seed=1, hole_fraction=0.0, dims=(2, 2, 2)).dumps())
    w = nq._wall_tris(m)
    w["tri"] = w["tri"][:0]
    x, d, r = nq._nearest_wall_bvh(m, np.zeros((3, 3)))
    assert np.all(np.isnan(x)) and np.all(np.isinf(d)) and np.all(r == -1)


@pytest.mark.parametrize("which", ["holes", "field"])
def test_bvh_boxes_hold_their_contents(which, request):
    """Brute force over the whole tree: the leaves tile the triangle list,
    every triangle lies in its leaf's box, every box holds its children's,
    and every finite wall is in the tree once."""
    mesh = request.getfixturevalue(which)
    b = nq._wall_bvh(mesh)
    box, node, tri = b["box"], b["node"], b["tri"].reshape(-1, 3, 3)
    K = len(tri)
    assert sorted(b["row"].tolist()) == list(range(len(nq._wall_tris(mesh)["tri"])))
    np.testing.assert_array_equal(tri, nq._wall_tris(mesh)["tri"][b["row"]])
    seen = np.zeros(K, int)
    depth = {0: 1}
    for k in range(len(node)):
        first, cnt = node[k]
        lo, hi = box[k, :3], box[k, 3:]
        assert np.all(lo <= hi)
        if cnt > 0:
            assert 1 <= cnt <= nq.BVH_LEAF
            T = tri[first:first + cnt]
            assert np.all(T >= lo) and np.all(T <= hi)
            np.testing.assert_array_equal(T.min(axis=(0, 1)), lo)    # tight
            np.testing.assert_array_equal(T.max(axis=(0, 1)), hi)
            np.testing.assert_array_equal(b["tbox"][first:first + cnt, :3], T.min(axis=1))
            np.testing.assert_array_equal(b["tbox"][first:first + cnt, 3:], T.max(axis=1))
            seen[first:first + cnt] += 1
        else:
            assert k < first and first + 1 < len(node)
            for c in (first, first + 1):
                assert np.all(box[c, :3] >= lo) and np.all(box[c, 3:] <= hi)
                depth[c] = depth[k] + 1
    assert np.all(seen == 1)
    assert len(depth) == len(node)                    # every node reached from the root
    assert max(depth.values()) == b["depth"] < nq._STACK


def test_plain_python_fallback_gives_the_same_answers(field, tmp_path):
    """Without numba (import blocked in a child process) the piece search
    answers, with the compiled kernel's answers."""
    pts = np.vstack([_points(field, 300, seed=31), [[np.nan, 0, 0], [1e160, 0, 0]]])
    path = tmp_path / "m.regn"
    regn.save(field, path)
    np.save(tmp_path / "p.npy", pts)
    m = regn.load(path)
    want_d = m.distance_to_wall(pts)
    want_n = m.nearest(pts)
    out = run_without_numba(
        "import importlib\n"
        "nq = importlib.import_module('regn.query.nearest')\n"
        f"m = regn.load({str(path)!r})\n"
        f"P = np.load({str(tmp_path / 'p.npy')!r})\n"
        "d = m.distance_to_wall(P)\n"
        "r = m.nearest(P)\n"
        "assert nq._kernels()['compiled'] is False\n"
        "assert 'wall_bvh' not in nq.scratch(m) and 'walls' in nq.scratch(m)\n"
        "print(json.dumps([d.tolist(), r.points.tolist(), r.tets.tolist()]))\n")
    d, x, t = json.loads(out)
    d, x, t = np.array(d, float), np.array(x, float), np.array(t)
    np.testing.assert_allclose(d, want_d, rtol=1e-9, atol=1e-6)
    assert np.isnan(d[-2]) and np.isinf(d[-1])
    np.testing.assert_allclose(x, want_n.points, rtol=1e-9, atol=1e-6)   # NaN where NaN
    out_ = m.locate(pts) < 0
    # the owning tet may differ only where the closest point is on a shared edge
    # or vertex (a tie); both hold the moved point
    same = t == want_n.tets
    assert same.mean() > 0.95 and np.all(t[~same] >= 0) and np.all(out_[~same])
    assert np.all(m.locate(x[t >= 0]) >= 0)


def test_import_does_not_load_numba():
    assert_numba_not_imported("import regn, regn.query.nearest\n")
