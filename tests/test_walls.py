"""The wall search (distance_to_wall / nearest): the compiled BVH descent
and the wall grid's scan are exact against brute force, on walls that are
huge, tiny, flat or corrupted, and name the same triangle (the nearest, the
smallest row on an exact tie); the BVH's boxes and the grid's lists hold
what they claim; the closest-point kernels of regn.geometry agree with the
reference."""

import numpy as np
import pytest

import regn
from regn.geometry._closest_kernels import (closest_point_on_triangle, closest_points_on_triangles,
                                            triangle_is_flat)
from regn.query.walls import nearest as nq

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
    """Distance from each point to its nearest triangle, by the reference
    (one with a NaN/inf vertex is never chosen, nor a NaN distance). Each
    point solves every triangle whose bounding box is no farther than the
    nearest triangle centre (plain numpy): the nearest triangle is always
    among them (its box is no farther than it, and it no farther than any
    triangle's centre), so the least is the least over every triangle."""
    tri = tri[np.isfinite(tri).all(axis=(1, 2))]
    out = np.full(len(pts), np.inf)
    if not len(tri):
        return out
    lo, hi, centre = tri.min(axis=1), tri.max(axis=1), tri.mean(axis=1)
    step = max(1, 500_000 // len(tri))
    for c in range(0, len(pts), step):
        p = pts[c:c + step]
        with np.errstate(over="ignore", invalid="ignore"):
            bound = np.sqrt(((p[:, None] - centre[None]) ** 2).sum(axis=2)).min(axis=1)
            gap = np.maximum(0.0, np.maximum(lo[None] - p[:, None], p[:, None] - hi[None]))
            near = np.sqrt((gap * gap).sum(axis=2)) <= bound[:, None] * (1 + 1e-6)
        near |= ~np.isfinite(bound)[:, None]                  # (overflow: every triangle)
        i, j = np.nonzero(near)
        x = closest_on_triangles(p[i], tri[j])
        with np.errstate(over="ignore", invalid="ignore"):
            d = np.linalg.norm(x - p[i], axis=1)
        sub = out[c:c + step]
        np.minimum.at(sub, i, np.where(np.isnan(d), np.inf, d))
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
    wall = m.nearest_wall(np.zeros((3, 3)))
    assert np.isinf(wall.distances).all() and (wall.faces == -1).all()
    assert np.isnan(wall.points).all() and np.isnan(wall.normals).all()


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
    assert_numba_not_imported("import regn, regn.query.walls.nearest\n")


# --- the wall grid ------------------------------------------------------------------

def _both(mesh, pts):
    """(x, d, row) of the hierarchy alone and of the grid (built here), for
    the same points."""
    b = nq._wall_bvh(mesh)
    g = nq._build_grid(b)
    assert g is not None
    K = nq._kernels()
    out = []
    for search, args in ((K.nearest_walls, (b,)), (K.nearest_walls_grid, (b, g))):
        n = len(pts)
        x, d, r = np.full((n, 3), np.nan), np.full(n, np.inf), np.full(n, -1, np.int64)
        search(*args, np.ascontiguousarray(pts, dtype=np.float64), x, d, r)
        out.append((x, d, r))
    return out


def _tie_rule_rows(tri, pts):
    """The reference answer's rows: each point's squared distance to every
    triangle by regn.geometry's kernel (judged against the reference in
    test_closest_point_kernels_match_the_reference), the smallest row among
    those exactly nearest."""
    rows = np.empty(len(pts), np.int64)
    for i, p in enumerate(pts):
        q = closest_points_on_triangles(np.repeat(p[None], len(tri), 0), tri)
        with np.errstate(over="ignore", invalid="ignore"):
            d = ((q - p) ** 2).sum(axis=1)
        d = np.where(np.isnan(d), np.inf, d)
        rows[i] = np.flatnonzero(d == d.min())[0] if np.isfinite(d.min()) else -1
    return rows


@pytest.mark.parametrize("which", ["holes", "field"])
def test_grid_answers_as_the_hierarchy_and_brute_force(which, request):
    """Points inside, in holes and asteroids, outside the box, far away, on
    wall vertices (ties between every triangle sharing one), on edges and
    on the grid's cell corners: the grid's answer, bit for bit the
    hierarchy's, is the brute-force nearest with the smallest-row tie rule."""
    mesh = request.getfixturevalue(which)
    tri = nq._wall_tris(mesh)["tri"].astype(np.float64)
    g = nq._build_grid(nq._wall_bvh(mesh))
    rng = np.random.default_rng(31)
    corners = g.frame[0] + g.frame[1, 0] * rng.integers(0, g.dims + 1, (300, 3))
    verts = tri.reshape(-1, 3)[rng.choice(3 * len(tri), 300)]
    rows = rng.choice(len(tri), 300)
    edges = tri[rows, 0] + rng.uniform(size=(300, 1)) * (tri[rows, 1] - tri[rows, 0])
    pts = np.vstack([_points(mesh, 1500, seed=22), corners, verts, edges])
    (x0, d0, r0), (x1, d1, r1) = _both(mesh, pts)
    for got in (x1, d1, r1):
        assert got.dtype in (np.float64, np.int64)
    np.testing.assert_array_equal(r1, r0)
    np.testing.assert_array_equal(d1, d0)
    np.testing.assert_array_equal(x1, x0)
    np.testing.assert_allclose(d1, _brute(tri, pts), rtol=1e-9, atol=1e-6)
    pick = np.concatenate([rng.choice(len(pts) - 900, 300, replace=False),
                           np.arange(len(pts) - 900, len(pts))])
    np.testing.assert_array_equal(r1[pick], _tie_rule_rows(tri, pts[pick]))
    assert np.all(d1[len(pts) - 600:len(pts) - 300] == 0)       # the vertices


@pytest.mark.parametrize("which", ["holes", "field"])
def test_grid_lists_hold_what_they_claim(which, request):
    """Brute force per cell: the list is sorted by distance from the cell's
    centre, each entry's bound is at most that distance, the list holds
    every triangle within D + 2 REACH of the centre (D: its nearest) unless
    it was cut, every triangle left off is no nearer than the cut, and no
    list is longer than GRID_LIST."""
    mesh = request.getfixturevalue(which)
    b = nq._wall_bvh(mesh)
    g = nq._build_grid(b)
    size, reach, slack = g.frame[1]
    assert reach >= 0.5 * np.sqrt(3) * size and slack > 0
    tri = b.tri.reshape(-1, 3, 3)
    C = int(np.prod(g.dims))
    assert len(g.start) == C + 1 and g.start[0] == 0 and g.start[-1] == len(g.tris)
    rng = np.random.default_rng(3)
    for c in rng.choice(C, 60, replace=False):
        ijk = np.array([c % g.dims[0], (c // g.dims[0]) % g.dims[1], c // (g.dims[0] * g.dims[1])])
        o = g.frame[0] + (ijk + 0.5) * size
        dist = np.linalg.norm(closest_on_triangles(np.repeat(o[None], len(tri), 0), tri) - o,
                              axis=1)
        listed = g.tris[g.start[c]:g.start[c + 1]]
        lb = g.lb[g.start[c]:g.start[c + 1]].astype(np.float64)
        assert len(listed) <= nq.GRID_LIST and len(set(listed.tolist())) == len(listed)
        assert np.all(np.diff(lb) >= 0)
        assert np.all(lb <= dist[listed] * (1 + 1e-9))
        left = np.setdiff1d(np.arange(len(tri)), listed)
        near = dist <= dist.min() + 2 * reach
        if np.isinf(g.cut[c]):
            assert not near[left].any()
        else:
            assert len(listed) == nq.GRID_LIST and dist[left].min() >= g.cut[c] * (1 - 1e-9)
            assert g.cut[c] >= lb[-1]


def test_grid_zero_area_and_non_finite_walls():
    """The grid over walls collapsed to segments and points, and over walls
    with NaN/inf vertices or overflowing ones (put into the cache by hand):
    the hierarchy's answers, the brute force's distances."""
    m = random_map(60, seed=3, hole_fraction=0.15, dims=(4, 4, 4))
    fv = m.face_vertices[m.boundary_faces]
    V = m.vertices
    (a, b, c) = fv[len(fv) // 2]
    z = _patched(m, [(c, V[a] + 0.25 * (V[b] - V[a]))])
    w = nq._wall_tris(z)
    tri = w["tri"].astype(np.float64).copy()
    pts = np.vstack([_points(z, 600, seed=9), tri.reshape(-1, 3)[:200]])
    for case in ("flat", "corrupt"):
        if case == "corrupt":
            bad = np.arange(0, len(tri), 5)
            tri[bad[0::3], 0, 0] = np.nan
            tri[bad[1::3], 1, 2] = np.inf
            tri[bad[2::3]] *= 1e296
            w["tri"] = tri
            nq.scratch(z).pop("wall_bvh")
        (x0, d0, r0), (x1, d1, r1) = _both(z, pts)
        np.testing.assert_array_equal(r1, r0)
        np.testing.assert_array_equal(d1, d0)
        good = np.isfinite(tri).all(axis=(1, 2))
        np.testing.assert_allclose(d1, _brute(tri[good], pts), rtol=1e-9, atol=1e-6)


def test_grid_is_none_without_a_box():
    """Walls that are one point, or whose box overflows, get no grid (the
    hierarchy answers alone)."""
    point = nq._build_bvh(np.ones((3, 3, 3)))
    assert point is not None and nq._build_grid(point) is None
    huge = nq._build_bvh(np.array([[[0, 0, 0], [1e308, 0, 0], [0, 1e308, 0]],
                                   [[0, 0, 0], [-1e308, 0, 0], [0, 0, -1e308]]], float))
    assert nq._build_grid(huge) is None


@pytest.mark.parametrize("which", ["holes", "field"])
def test_small_and_large_batches_answer_alike(which, request):
    """A batch below GRID_MIN_BATCH goes to the hierarchy, a larger one to
    the grid (built on it): the public answers are the same bits, nearest's
    tetrahedra included, on any number of threads."""
    mesh = regn.loads(request.getfixturevalue(which).dumps())   # no grid built yet
    pts = _points(mesh, nq.GRID_MIN_BATCH, seed=41)
    assert len(pts) >= nq.GRID_MIN_BATCH
    small = [mesh.distance_to_wall(pts[i:i + 1000]) for i in range(0, len(pts), 1000)]
    near_small = [mesh.nearest(pts[i:i + 1000]) for i in range(0, len(pts), 1000)]
    assert "wall_grid" not in nq.scratch(mesh)
    big = mesh.distance_to_wall(pts, workers=2)
    assert nq.scratch(mesh)["wall_grid"] is not None
    np.testing.assert_array_equal(np.concatenate(small), big)
    near = mesh.nearest(pts, workers=1)
    np.testing.assert_array_equal(np.concatenate([r.points for r in near_small]), near.points)
    np.testing.assert_array_equal(np.concatenate([r.tets for r in near_small]), near.tets)
    assert mesh.distance_to_wall(np.zeros((0, 3))).shape == (0,)


def _normals_flipped(mesh):
    """The mesh's file with every stored face normal and plane offset negated
    (the same planes, the other orientation: what another tool may write)."""
    from regn.format import layout
    built = regn.loads(mesh.dumps())
    data = bytearray(mesh.dumps())
    base = (built.parts.frame.data_start
            + built.parts.section_offsets[layout.SECTION_NAMES.index("faces")])
    offs = layout.field_offsets("faces")
    for f in range(mesh.n_faces):
        for field, width in (("normal", 12), ("d", 4)):
            at = base + layout.SIZES["faces"] * f + offs[field]
            data[at:at + width] = (-np.frombuffer(bytes(data[at:at + width]), ">f4")
                                   ).astype(">f4").tobytes()
    return regn.loads(bytes(data))


@pytest.mark.parametrize("which", ["holes", "field"])
def test_nearest_wall_names_the_wall_distance_to_wall_measures(which, request):
    """nearest_wall: the distance of distance_to_wall (bit for bit), a point on
    the named boundary face at that distance (brute force over every wall),
    and that face's unit normal pointing out of the volume, whichever way the
    file orients its normals."""
    mesh = request.getfixturevalue(which)
    pts = _points(mesh, 1000, seed=33)
    w = mesh.nearest_wall(pts)
    np.testing.assert_array_equal(w.distances, mesh.distance_to_wall(pts))
    assert np.all(w.faces >= 0)
    assert np.isin(w.faces, mesh.boundary_faces).all()
    tri = np.asarray(mesh.vertices, np.float64)[np.asarray(mesh.face_vertices)[w.faces]]
    np.testing.assert_allclose(w.distances, _brute(
        nq._wall_tris(mesh)["tri"].astype(np.float64), pts), rtol=1e-9, atol=1e-6)
    np.testing.assert_allclose(closest_on_triangles(w.points, tri), w.points, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(w.points - pts, axis=1), w.distances,
                               rtol=1e-9, atol=1e-6)
    # the normal: unit, across the triangle's plane, away from the tetrahedron
    # the face bounds (its fourth vertex lies behind it)
    n = w.normals
    np.testing.assert_allclose(np.linalg.norm(n, axis=1), 1.0, atol=1e-6)
    cross = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    cross /= np.linalg.norm(cross, axis=1)[:, None]
    assert np.all(np.abs(np.einsum("nd,nd->n", n, cross)) > 1 - 1e-6)
    owner = np.flatnonzero(np.isin(np.asarray(mesh.tet_faces), w.faces).any(axis=1))
    tp = np.asarray(mesh.tet_points, np.float64)
    for i in range(0, len(pts), 37):
        t = [k for k in owner if w.faces[i] in np.asarray(mesh.tet_faces)[k]]
        assert len(t) == 1                              # a wall bounds one tetrahedron
        centre = tp[t[0]].mean(axis=0)
        assert np.dot(n[i], centre - tri[i].mean(axis=0)) < 0
    # a point whose closest wall point is inside the triangle (the offset is
    # along the normal) lies behind the normal when it is in the volume and
    # before it when it is in a rock
    inside = mesh.locate(pts) >= 0
    side = np.einsum("nd,nd->n", pts - w.points, n)
    square = np.abs(side) > (1 - 1e-9) * w.distances
    square &= w.distances > 1e-6 * L
    assert square.sum() > len(pts) // 4
    assert np.all(side[inside & square] < 0) and np.all(side[~inside & square] > 0)
    flipped = _normals_flipped(mesh)
    assert np.all(np.einsum("fd,fd->f", np.asarray(flipped.face_normals),
                            np.asarray(mesh.face_normals)) < 0)
    w2 = flipped.nearest_wall(pts)
    np.testing.assert_array_equal(w2.faces, w.faces)
    np.testing.assert_allclose(w2.normals, w.normals, atol=1e-7)


def test_nearest_wall_without_an_answer(field):
    pts = np.array([[np.nan, 0, 0], [np.inf, 0, 0], [1e200, 0, 0], [0, 0, 0]])
    w = field.nearest_wall(pts)
    assert np.isnan(w.distances[:2]).all() and np.isinf(w.distances[2])
    assert w.faces[:3].tolist() == [-1, -1, -1] and w.faces[3] >= 0
    assert np.isnan(w.points[:3]).all() and np.isnan(w.normals[:3]).all()
    assert np.isfinite(w.points[3]).all() and np.isfinite(w.normals[3]).all()
    empty = field.nearest_wall(np.zeros((0, 3)))
    assert empty.distances.shape == (0,) and empty.points.shape == (0, 3)


@pytest.mark.parametrize("order", ["sorted", "reversed", "equal_keys", "organ_pipe"])
def test_the_hierarchy_splits_every_node_at_its_middle_whatever_the_input_order(order):
    """Triangles in orders that defeat a naive selection (sorted, reversed,
    all on one plane, an organ pipe): every triangle in exactly one leaf;
    each node's box holds its triangles; an inner node's halves are equal
    in size to one triangle and split along one axis (no centroid of the
    first half beyond one of the second); the distances match brute force."""
    n = 3000
    x = np.arange(n, dtype=float)
    if order == "reversed":
        x = x[::-1]
    elif order == "equal_keys":
        x = np.zeros(n)
    elif order == "organ_pipe":
        x = np.concatenate([x[: n // 2], x[n // 2:][::-1]])
    base = np.stack([x, np.zeros(n) if order == "equal_keys" else 0.5 * x, np.zeros(n)], axis=1)
    tri = base[:, None, :] + np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0.5]])
    b = nq._build_bvh(tri)
    cen = b.tri.reshape(-1, 3, 3).mean(axis=1)
    seen = np.zeros(n, int)

    def walk(k):
        first, count = b.node[k]
        if count:
            seen[first:first + count] += 1
            span = np.arange(first, first + count)
        else:
            left, right = walk(first), walk(first + 1)
            assert abs(len(left) - len(right)) <= 1
            assert any(cen[left, ax].max() <= cen[right, ax].min() for ax in range(3))
            span = np.concatenate([left, right])
        t = b.tri[span].reshape(-1, 3)
        assert (t >= b.box[k, :3]).all() and (t <= b.box[k, 3:]).all()
        return span

    walk(0)
    assert (seen == 1).all()
    pts = np.random.default_rng(5).uniform(-10, n + 10, (200, 3))
    d = np.empty(200)
    nq._kernels().nearest_walls(b, pts, np.empty((200, 3)), d, np.empty(200, np.int64))
    np.testing.assert_allclose(d, _brute(tri, pts), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("rounds", [0, 1, 64])
def test_a_selection_that_runs_out_of_rounds_sorts_what_is_left(rounds, monkeypatch):
    """The hierarchy's selection (run as Python, so that its round limit
    can be set) leaves no key before the middle larger than one after it,
    whether it finishes by selection or, out of rounds, by sorting."""
    from regn.query.walls import _bvh_kernels as bk
    monkeypatch.setattr(bk, "SELECT_ROUNDS", rounds)
    rng = np.random.default_rng(rounds)
    cen = rng.integers(0, 50, (401, 3)).astype(float)        # with many ties
    order = rng.permutation(401)
    bk._select.py_func(order, cen, 1, 0, 400, 200)
    assert sorted(order) == list(range(401))
    assert cen[order[:200], 1].max() <= cen[order[200:], 1].min()
