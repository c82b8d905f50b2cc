"""The wall search (distance_to_wall / nearest): the compiled BVH descent
is exact against brute force, on walls that are huge, tiny, flat or
corrupted; the BVH's boxes hold what they claim; the closest-point kernels of
regn.geometry agree with the reference."""

import numpy as np
import pytest

import regn
from regn.geometry._kernels import (closest_point_on_triangle, closest_points_on_triangles,
                                    triangle_is_flat)
from regn.query import nearest as nq

from conftest import H, assert_numba_not_imported, random_map
from test_query import L, _make, closest_on_triangles


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
    """Distance from each point to its nearest triangle (every triangle
    solved by the reference; one with a NaN/inf vertex is never chosen, nor
    a NaN distance)."""
    tri = tri[np.isfinite(tri).all(axis=(1, 2))]
    out = np.empty(len(pts))
    step = max(1, 200_000 // max(len(tri), 1))
    for c in range(0, len(pts), step):
        p = pts[c:c + step]
        x = closest_on_triangles(np.repeat(p, len(tri), 0), np.tile(tri, (len(p), 1, 1)))
        with np.errstate(over="ignore", invalid="ignore"):
            d = np.linalg.norm(x - np.repeat(p, len(tri), 0), axis=1).reshape(len(p), -1)
        d = np.where(np.isnan(d), np.inf, d)
        out[c:c + step] = d.min(axis=1) if len(tri) else np.inf
    return out


def _check(mesh, pts):
    """The BVH's distances equal brute force; each returned point lies on its
    row's triangle at the returned distance."""
    tri = nq._wall_tris(mesh)["tri"].astype(np.float64)
    x, d, r = nq._nearest_wall(mesh, pts)
    np.testing.assert_allclose(d, _brute(tri, pts), rtol=1e-9, atol=1e-6)
    ok = r >= 0
    assert np.all(np.isfinite(d[ok])) and np.all(np.isinf(d[~ok]))
    on = closest_on_triangles(x[ok], tri[r[ok]])
    np.testing.assert_allclose(on, x[ok], rtol=0, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(x[ok] - pts[ok], axis=1), d[ok],
                               rtol=1e-9, atol=1e-6)
    return d, r


@pytest.mark.parametrize("which", ["holes", "field"])
def test_bvh_matches_brute_force(which, request):
    mesh = request.getfixturevalue(which)
    pts = _points(mesh, 1500, seed=21)
    d, r = _check(mesh, pts)
    assert np.all(r >= 0) and np.all(np.isfinite(d))
    # the public queries go through the same kernel
    np.testing.assert_array_equal(mesh.distance_to_wall(pts), d)


def test_closest_point_kernels_match_the_reference():
    """regn.geometry's closest point on a triangle, on random, thin, flat,
    zero-area and tiny-and-far triangles: the distance of the reference (an
    independent construction), and a point on the triangle."""
    rng = np.random.default_rng(9)
    n = 4000
    T = rng.normal(size=(n, 3, 3))
    P = rng.normal(size=(n, 3)) * 2
    k = n // 8
    T[:k, 2] = T[:k, 0] + rng.uniform(-1, 2, (k, 1)) * (T[:k, 1] - T[:k, 0])   # collinear
    T[k:2 * k, 1] = T[k:2 * k, 2] = T[k:2 * k, 0]                            # a point
    T[2 * k:3 * k, 2] = T[2 * k:3 * k, 1] + 1e-9 * rng.normal(size=(k, 3))   # a sliver
    T[3 * k:4 * k] *= 1e-6                                                   # tiny, far
    P[3 * k:4 * k] *= 1e6
    Q = closest_points_on_triangles(P, T)
    ref = closest_on_triangles(P, T)
    scale = np.abs(P).max(axis=1) + np.abs(T).max(axis=(1, 2))
    dq, dr = np.linalg.norm(Q - P, axis=1), np.linalg.norm(ref - P, axis=1)
    assert np.all(np.abs(dq - dr) <= 1e-12 * scale)
    on = closest_on_triangles(Q, T)             # the answer lies on its triangle
    assert np.all(np.linalg.norm(on - Q, axis=1) <= 1e-12 * scale)
    flat = [triangle_is_flat(*t.ravel()) for t in T[:3 * k]]
    assert all(flat) and not any(triangle_is_flat(*t.ravel()) for t in T[4 * k:4 * k + 50])
    assert closest_point_on_triangle(*T[5].ravel(), *P[5]) == tuple(Q[5])


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
    d_v, _ = _check(mesh, verts)
    assert np.all(d_v == 0)                         # a vertex is its own closest point
    for pts in (edges, faces):
        d, _ = _check(mesh, pts)
        assert d.max() < 1e-9 * L                   # rounding of the point itself only
    np.testing.assert_array_equal(mesh.distance_to_wall(verts), 0.0)


def test_far_and_overflowing_points(field):
    pts = np.array([[1e12, 0, 0], [0, -3e15, 2e15], [1e160, 0, 0], [-1e200, 1e200, 0]])
    d, r = _check(field, pts)
    assert np.all(np.isfinite(d[:2])) and np.all(r[:2] >= 0)
    assert np.all(np.isinf(d[2:])) and np.all(r[2:] == -1)     # squares overflow
    nr = field.nearest(pts)
    assert np.all(nr.tets[:2] >= 0) and np.all(nr.tets[2:] == -1)
    assert np.all(np.isnan(nr.points[2:]))
    dw = field.distance_to_wall(np.vstack([pts, [[np.nan, 0, 0], [np.inf, 0, 0]]]))
    assert np.all(np.isinf(dw[2:4])) and np.all(np.isnan(dw[4:]))
    # far from small triangles, the closest-point formula's denominators can
    # round to 0: answered all the same
    rng = np.random.default_rng(5)
    far = rng.normal(size=(400, 3)) * 10.0 ** rng.uniform(6, 16, (400, 1))
    d, r = _check(field, far)
    assert np.all(r >= 0)


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
    assert bvh.flat.sum() >= (area == 0).sum()
    near = tri[area < 1e-6 * H * H].reshape(-1, 3)
    rng = np.random.default_rng(2)
    pts = np.vstack([_points(z, 400, seed=8), near, near + rng.normal(size=near.shape) * 50])
    d, _ = _check(z, pts)
    assert np.all(d[len(pts) - 2 * len(near):len(pts) - len(near)] == 0)


def test_non_finite_walls_are_never_chosen(field):
    """The reader refuses NaN/inf vertices, so such walls are put into the
    wall cache by hand here (a defence in depth): they are skipped, and
    walls at 1e300 overflow to no answer."""
    m = regn.loads(field.dumps())
    w = nq._wall_tris(m)
    tri = w["tri"].astype(np.float64).copy()
    bad = np.arange(0, len(tri), 7)
    tri[bad[0::3], 0, 0] = np.nan
    tri[bad[1::3], 1, 2] = np.inf
    tri[bad[2::3]] *= 1e296                       # finite, squares overflow
    w["tri"] = tri
    pts = _points(m, 400, seed=12)
    good = np.setdiff1d(np.arange(len(tri)), bad)
    d, r = _check(m, pts)
    assert not np.isin(r, bad).any() and np.all(r >= 0)
    np.testing.assert_allclose(d, _brute(tri[good], pts), rtol=1e-9, atol=1e-6)
    finite = np.flatnonzero(np.isfinite(tri).all(axis=(1, 2)))
    assert sorted(nq._wall_bvh(m).row.tolist()) == finite.tolist()
    # nothing finite at all: no answer, no crash
    w["tri"] = np.full_like(tri, np.nan)
    nq.scratch(m).pop("wall_bvh")
    x, d, r = nq._nearest_wall(m, pts[:5])
    assert np.all(np.isnan(x)) and np.all(np.isinf(d)) and np.all(r == -1)


def test_no_walls():
    b = nq._build_bvh(np.zeros((0, 3, 3)))
    assert b is None
    m = regn.loads(random_map(30, seed=1, hole_fraction=0.0, dims=(2, 2, 2)).dumps())
    w = nq._wall_tris(m)
    w["tri"] = w["tri"][:0]
    x, d, r = nq._nearest_wall(m, np.zeros((3, 3)))
    assert np.all(np.isnan(x)) and np.all(np.isinf(d)) and np.all(r == -1)


@pytest.mark.parametrize("which", ["holes", "field"])
def test_bvh_boxes_hold_their_contents(which, request):
    """Brute force over the whole tree: the leaves tile the triangle list,
    every triangle lies in its leaf's box, every box holds its children's,
    and every finite wall is in the tree once."""
    mesh = request.getfixturevalue(which)
    b = nq._wall_bvh(mesh)
    box, node, tri = b.box, b.node, b.tri.reshape(-1, 3, 3)
    K = len(tri)
    assert sorted(b.row.tolist()) == list(range(len(nq._wall_tris(mesh)["tri"])))
    np.testing.assert_array_equal(tri, nq._wall_tris(mesh)["tri"][b.row])
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
            np.testing.assert_array_equal(b.tbox[first:first + cnt, :3], T.min(axis=1))
            np.testing.assert_array_equal(b.tbox[first:first + cnt, 3:], T.max(axis=1))
            seen[first:first + cnt] += 1
        else:
            assert k < first and first + 1 < len(node)
            for c in (first, first + 1):
                assert np.all(box[c, :3] >= lo) and np.all(box[c, 3:] <= hi)
                depth[c] = depth[k] + 1
    assert np.all(seen == 1)
    assert len(depth) == len(node)                    # every node reached from the root
    # median splits: a balanced tree, and the descent's stack (depth + 2) fits it
    assert max(depth.values()) == b.depth <= np.ceil(np.log2(K)) + 1


def test_import_does_not_load_numba():
    assert_numba_not_imported("import regn, regn.query.nearest\n")
