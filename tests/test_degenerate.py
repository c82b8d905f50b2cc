"""Queries on degenerate geometry: a file whose tetrahedron was flattened
after building (the builder refuses one, a file from elsewhere need not), and
built slivers. Every query must answer or raise the library's error, and
never place a point in a tetrahedron that does not hold it."""

import numpy as np

import regn
from regn.errors import RegnError
from regn.query.paths.path import _graph

from conftest import H, random_map


def _flattened(seed=3):
    """A built map with one interior vertex moved onto another vertex of one
    of its tets: that tet has volume 0 in the file (and its neighbours are
    distorted, some inverted)."""
    m = random_map(60, seed=seed, hole_fraction=0.0, dims=(4, 4, 4))
    V = m.vertices
    corners = np.all(np.isclose(np.abs(V), H), axis=1)
    T = next(t for t in range(m.n_tets) if not corners[m.tets[t, 3]])
    a, b, c, v = m.tets[T]
    moved = V[a]        # onto vertex a: T is flat exactly, even in float32
    built = regn.loads(m.dumps())            # a built mesh has no file layout yet
    data = bytearray(m.dumps())
    at = built.parts.frame.data_start + built.parts.section_offsets[0] + 12 * int(v)
    data[at:at + 12] = np.asarray(moved, ">f4").tobytes()      # built big-endian
    flat = regn.loads(bytes(data))
    return flat, T, int(v)


def _contains(mesh, tets, pts, tol=1e-7):
    """Independent barycentric test of pts[i] in tet tets[i]."""
    P = mesh.tet_points[tets].astype(np.float64)
    A = np.transpose(P[:, 1:] - P[:, :1], (0, 2, 1))
    lam = np.linalg.solve(A, (pts - P[:, 0])[..., None])[..., 0]
    bc = np.concatenate([1 - lam.sum(1, keepdims=True), lam], axis=1)
    return bc.min(axis=1) >= -tol


def test_flat_tet_is_reported_and_never_located():
    flat, T, v = _flattened()
    vol = flat.tet_volumes[T]
    assert vol == 0
    rep = regn.verify(flat)
    check = next(c for c in rep.checks if c.name == "tet_volume_nonzero")
    assert check.status == "fail" and f"tet {T} " in check.detail
    P = flat.tet_points[T].astype(np.float64)
    rng = np.random.default_rng(0)
    w = rng.dirichlet(np.ones(4), 200)
    on_flat = np.vstack([w @ P, P, P.mean(0)[None]])          # in its plane
    pts = np.vstack([on_flat, rng.uniform(-H, H, (500, 3))])
    t = flat.locate(pts)
    assert np.all((t >= -1) & (t < flat.n_tets))
    assert not np.any(t == T)
    hit = t >= 0
    assert _contains(flat, t[hit], pts[hit]).all()


def test_queries_answer_on_a_flat_tet():
    flat, T, v = _flattened()
    P = flat.tet_points[T].astype(np.float64)
    c = P.mean(0)
    rng = np.random.default_rng(2)
    pts = np.vstack([c[None], P, rng.uniform(-H, H, (50, 3))])
    q, tq = flat.nearest(pts)
    assert q.shape == pts.shape and tq.shape == (len(pts),)
    d = flat.distance_to_wall(pts)
    assert d.shape == (len(pts),) and not np.any(np.isnan(d[tq >= 0]))
    for a, b in zip(pts[:20], pts[20:40]):
        try:
            p = flat.find_path(a, b)
        except RegnError:
            continue
        assert p.status in ("ok", "start_outside", "goal_outside", "unreachable")
        if p.found:
            assert np.isfinite(p.cost) and np.all(np.isfinite(p.points))
            # length <= cost needs stored costs >= centroid distances; the
            # moved vertex made some stored costs too small, and then the
            # path is still the cheapest by the file's costs
            if _graph(flat)["admissible"]:
                assert p.length <= p.cost * (1 + 1e-9) + 1e-9
            assert np.all(flat.locate(p.points) >= 0)
        try:
            r = flat.raycast(a, c)      # through the flat tet
        except RegnError:
            continue
        assert isinstance(r.clear, (bool, np.bool_))
    los = flat.line_of_sight(pts[:25], pts[25:50])
    assert los.shape == (25,)
    assert np.all(np.isfinite(flat.random_points(100, seed=3)))


def test_sliver_tets_built_and_located():
    # a near-flat tet between two good ones: vertex 4 sits 1e-5 of the
    # edge length above the shared face's plane
    h = 100.0
    pts = np.array([[0, 0, 0], [h, 0, 0], [0, h, 0], [0, 0, h],
                    [h / 3, h / 3, 1e-3], [0, 0, -h]], dtype=np.float64)
    tets = np.array([[0, 1, 2, 3], [0, 1, 2, 4]])
    m = regn.build(pts, tets[:1], bbox=((-h,) * 3, (h,) * 3), dims=(2, 2, 2))
    # the sliver itself: the builder accepts it or refuses it with its error
    try:
        s = regn.build(pts[[0, 1, 2, 4]], np.array([[0, 1, 2, 3]]),
                       bbox=((-h,) * 3, (h,) * 3), dims=(2, 2, 2))
    except RegnError:
        s = None
    for mesh in (m, s):
        if mesh is None:
            continue
        P = mesh.tet_points[0].astype(np.float64)
        w = np.random.default_rng(4).dirichlet(np.ones(4), 300)
        inside = w @ P
        t = mesh.locate(np.vstack([inside, P]))
        hit = t >= 0
        assert hit[:300].mean() > 0.95          # interior points are found
        assert _contains(mesh, t[hit], np.vstack([inside, P])[hit]).all()
        p = mesh.find_path(inside[0], inside[1])
        assert p.found and p.status == "ok"
