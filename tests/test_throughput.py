"""Throughput without changing answers (issue 17): batches on several
threads, the segment filter of line_of_sight, cheap single calls, and the
start-up of a single query (issue 18)."""

import math
import subprocess
import sys
import threading

import numpy as np
import pytest

import regn
from regn import QueryError
from regn._jit import run_chunks, worker_count
from regn.query.sight import _segment_filter_kernels as SK
from regn.query.sight.segment_filter import sight_grid

from conftest import H, sphere_holes_map


@pytest.fixture(scope="module")
def mesh():
    return sphere_holes_map(900, seed=11, holes=7)[0]


def _bits(x):
    """An array's exact bits (NaN payloads included), for bit-equality."""
    x = np.ascontiguousarray(x)
    return x.view(np.uint8) if x.dtype.kind != "U" else x


def _same(x, y):
    if hasattr(x, "_fields") or isinstance(x, tuple):
        return all(_same(u, v) for u, v in zip(x, y))
    if hasattr(x, "normal"):                          # RaycastHits
        return all(_same(getattr(x, f), getattr(y, f))
                   for f in ("clear", "status", "face", "point", "t", "normal"))
    return x.shape == y.shape and x.dtype == y.dtype and np.array_equal(_bits(x), _bits(y))


# --- every batch query: the same bits on one thread or several ------------------

def test_batches_answer_the_same_on_any_number_of_threads(mesh):
    rng = np.random.default_rng(5)
    n = 30_000                               # several chunks for every query
    pts = np.vstack([mesh.random_points(n // 2, seed=6),
                     rng.uniform(-1.3 * H, 1.3 * H, (n // 2, 3))])
    pts[::997] = np.nan
    a, b = mesh.random_points(n, seed=7), np.vstack([mesh.random_points(n // 2, seed=8),
                                                      rng.uniform(-H, H, (n // 2, 3))])
    queries = {
        "locate": lambda w: mesh.locate(pts, workers=w),
        "locate grid + barycentric": lambda w: mesh.locate(pts[:8000], method="grid",
                                                           return_barycentric=True, workers=w),
        "nearest": lambda w: mesh.nearest(pts, workers=w),
        "distance_to_wall": lambda w: mesh.distance_to_wall(pts, workers=w),
        "line_of_sight": lambda w: mesh.line_of_sight(a, b, workers=w),
        "raycast_many": lambda w: mesh.raycast_many(a, b, workers=w),
        # a sphere's queries (issue 16) spread the same way
        "nearest radius": lambda w: mesh.nearest(pts[:6000], radius=800.0, workers=w),
        "line_of_sight radius": lambda w: mesh.line_of_sight(a, b, radius=800.0, workers=w),
        "raycast_many radius": lambda w: mesh.raycast_many(a, b, radius=800.0, workers=w),
    }
    for name, query in queries.items():
        one = query(1)
        for w in (2, 3, None):
            assert _same(one, query(w)), (name, w)


def test_workers_must_be_a_whole_number_of_threads(mesh):
    p = mesh.random_points(10, seed=1)
    for bad in (0, -1, 1.5, "2", True, [2]):
        with pytest.raises(QueryError, match="workers"):
            mesh.locate(p, workers=bad)
        with pytest.raises(QueryError, match="workers"):
            mesh.line_of_sight(p, p, workers=bad)
    assert worker_count(np.int64(3)) == 3 and worker_count(None) >= 1


def test_run_chunks_gives_every_item_to_exactly_one_chunk():
    for n, workers, chunk in ((0, 2, 10), (1, 4, 10), (10_000, 3, 700), (50_000, 2, 65536),
                              (9_999, 1, 1000)):
        calls = []
        lock = threading.Lock()

        def fn(i, j, worker):
            with lock:
                calls.append((i, j, worker))
        run_chunks(fn, n, workers, chunk=chunk, min_chunk=100)
        hits = np.zeros(n, int)
        for i, j, worker in calls:
            assert 0 <= i < j <= n and j - i <= chunk and 0 <= worker < workers
            hits[i:j] += 1
        assert np.all(hits == 1)
        if workers == 1:
            assert [c[0] for c in calls] == sorted(c[0] for c in calls)   # inline, in order


def test_run_chunks_raises_the_first_error_and_nests():
    def boom(i, j, worker):
        if i > 0:
            raise ValueError("chunk failed")
    with pytest.raises(ValueError, match="chunk failed"):
        run_chunks(boom, 10_000, 2, chunk=1000, min_chunk=100)
    total = np.zeros(1000, int)

    def outer(i, j, worker):                 # every pool thread busy, each nesting
        def inner(k, m, _):
            total[i + k:i + m] += 1
        run_chunks(inner, j - i, 4, chunk=10, min_chunk=5)
    run_chunks(outer, 1000, 4, chunk=100, min_chunk=50)
    assert np.all(total == 1)


# --- the segment filter of line_of_sight ------------------------------------------

def _verdicts(mesh, a, b):
    out = np.empty(len(a), np.int8)
    SK.filter_segments(sight_grid(mesh), np.ascontiguousarray(a), np.ascontiguousarray(b),
                       0, len(a), out)
    return out


def _wall_crossings(mesh, a, b):
    """Independent: does segment i cross a boundary triangle strictly inside
    it (barycentrics > 1e-7, fraction in (1e-7, 1 - 1e-7)), or come within
    1e-7 of one (ambiguous: such segments are left out)? Moller-Trumbore."""
    tri = mesh.vertices[mesh.face_vertices[mesh.boundary_faces]].astype(np.float64)
    p0, e1, e2 = tri[:, 0], tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]
    crosses = np.zeros(len(a), bool)
    near = np.zeros(len(a), bool)
    for i in range(len(a)):
        d = b[i] - a[i]
        h = np.cross(d, e2)
        det = (e1 * h).sum(1)
        with np.errstate(divide="ignore", invalid="ignore"):
            inv = 1.0 / det
            sv = a[i] - p0
            u = (sv * h).sum(1) * inv
            q = np.cross(sv, e1)
            v = (q @ d) * inv
            t = (q * e2).sum(1) * inv
        w = 1 - u - v
        tol = 1e-7
        inside = (u > tol) & (v > tol) & (w > tol) & (t > tol) & (t < 1 - tol)
        touch = (u > -tol) & (v > -tol) & (w > -tol) & (t > -tol) & (t < 1 + tol)
        crosses[i] = inside.any()
        near[i] = (touch & ~inside).any() or (np.abs(det) < 1e-9 * np.abs(d).max() ** 2).any()
    return crosses, near


def test_line_of_sight_against_the_walls_directly(mesh):
    """Independent of the walk: clear exactly when the start is in the volume
    and no wall is crossed (segments grazing a wall left out)."""
    rng = np.random.default_rng(21)
    a = np.vstack([mesh.random_points(1500, seed=22), rng.uniform(-H, H, (500, 3))])
    b = np.vstack([mesh.random_points(1000, seed=23), rng.uniform(-H, H, (1000, 3))])
    crosses, near = _wall_crossings(mesh, a, b)
    want = (mesh.locate(a) >= 0) & ~crosses
    los = mesh.line_of_sight(a, b)
    np.testing.assert_array_equal(los[~near], want[~near])
    assert near.sum() < 20 and 0.2 < los.mean() < 0.8


def test_the_filter_decides_most_segments_and_agrees_with_the_walk(mesh):
    a, b = mesh.random_points(4000, seed=31), mesh.random_points(4000, seed=32)
    v = _verdicts(mesh, a, b)
    decided = np.isin(v, (SK.FREE, SK.BLOCKED))
    assert decided.mean() > 0.95
    clear = np.array([mesh.raycast(x, y).clear for x, y in zip(a, b)])
    assert np.all(clear[v == SK.FREE]) and not np.any(clear[v == SK.BLOCKED])
    np.testing.assert_array_equal(mesh.line_of_sight(a, b), clear)


def test_segments_near_walls_or_outside_the_box_are_walked(mesh):
    """A segment whose only contact with a wall is an end on it, an end
    outside the box or not finite, or zero length: never decided by the
    filter (the walk's rules hold there)."""
    faces = mesh.boundary_faces[::7][:20]
    owner = mesh.face_owner[0][faces]
    on_wall = mesh.vertices[mesh.face_vertices[faces]].astype(np.float64).mean(axis=1)
    centre = mesh.tet_points[owner].astype(np.float64).mean(axis=1)
    inside = mesh.random_points(20, seed=41)
    a = np.vstack([centre, on_wall, inside, inside, inside])
    b = np.vstack([on_wall, centre, inside + [3 * H, 0, 0], inside, inside])
    b[60:70, 1] = np.nan
    a[70:80, 2] = np.inf
    v = _verdicts(mesh, a, b)
    assert np.all(v == SK.WALK)
    finite = np.isfinite(a).all(axis=1) & np.isfinite(b).all(axis=1)
    sight = mesh.line_of_sight(a, b)
    np.testing.assert_array_equal(sight[finite], [mesh.raycast(x, y).clear
                                                  for x, y in zip(a[finite], b[finite])])
    assert not sight[~finite].any()        # a batch row: answered, not clear
    with pytest.raises(regn.QueryError, match="not a finite coordinate"):
        mesh.raycast(a[60], b[60])          # a single ray: the caller's mistake, named


def test_a_corrupt_mesh_gets_no_filter():
    m, _ = sphere_holes_map(300, seed=3, holes=2)
    nb = m.neighbors.copy()
    t = int(np.flatnonzero((nb >= 0).all(axis=1))[0])
    u = int(nb[t, 0])
    nb[t, 0] = (u + 1) % m.n_tets if (u + 1) % m.n_tets != t else (u + 2) % m.n_tets
    m.__dict__["neighbors"] = nb        # a neighbour link that is not returned
    assert sight_grid(m).cell_start.shape == (1,)
    a, b = m.random_points(300, seed=4), m.random_points(300, seed=5)
    np.testing.assert_array_equal(m.line_of_sight(a, b),
                                  [m.raycast(x, y).clear for x, y in zip(a, b)])


TRI = np.array([[[0.0, 0, 0], [10, 0, 0], [0, 10, 0]]])


@pytest.mark.parametrize("pa,pb,want", [
    ((2, 2, 5), (2, 2, -5), SK.CROSS),           # through the middle
    ((2, 2, 5), (3, 3, 1), SK.MISS),             # both ends above the plane
    ((20, 2, 1), (20, 2, -1), SK.MISS),          # crosses the plane beyond an edge
    ((2, 2, 0.05), (8, 1, 0.05), SK.UNSURE),     # runs along it within the margin
    ((2, 2, 5), (2, 2, 0.0), SK.UNSURE),         # ends on it
    ((5, 0.05, 1), (5, 0.05, -1), SK.UNSURE),    # crosses within the margin of an edge
    ((5, -0.5, 1), (5, -0.5, -1), SK.MISS),      # ... or beyond it
    ((-5, 5, 0.01), (-1, 5, 0.01), SK.MISS),     # in the plane, outside an edge
])
def test_piece_meets_triangle(pa, pb, want):
    rows = SK.triangle_rows(TRI)
    assert SK.piece_meets_triangle(rows, 0, *map(float, pa), *map(float, pb), 0.1) == want
    flat = SK.triangle_rows(np.array([[[0.0, 0, 0], [10, 0, 0], [20, 0, 0]]]))
    assert np.isnan(flat).all()                  # never decided
    assert SK.piece_meets_triangle(flat, 0, *map(float, pa), *map(float, pb), 0.1) \
        == SK.UNSURE


def _meets_box(tri, lo, hi):
    """Independent: clip the triangle by the box's six half-spaces
    (Sutherland-Hodgman); something left means they meet."""
    poly = [np.asarray(p, float) for p in tri]
    for axis in range(3):
        for bound, sign in ((lo[axis], 1.0), (hi[axis], -1.0)):
            out = []
            for i, p in enumerate(poly):
                q = poly[(i + 1) % len(poly)]
                dp, dq = sign * (p[axis] - bound), sign * (q[axis] - bound)
                if dp >= 0:
                    out.append(p)
                if (dp >= 0) != (dq >= 0):
                    out.append(p + dp / (dp - dq) * (q - p))
            poly = out
            if not poly:
                return False
    return True


def test_triangle_cells_lists_the_cells_near_a_triangle():
    """triangle_cells lists (cell, triangle) exactly when the triangle meets
    the cell grown by pad (up to 1e-6 either way), needles included."""
    from regn.geometry._cell_kernels import triangle_cells
    rng = np.random.default_rng(3)
    tri = rng.uniform(0, 10, (30, 3, 3))
    tri[:5, 2] = tri[:5, 0] + 1e-3 * (tri[:5, 1] - tri[:5, 0])    # needles (flat)
    size, dims, pad = 1.25, np.array([8, 8, 8]), 0.2
    cells, tris = triangle_cells(tri, np.zeros(3), size, dims, pad)
    listed = set(zip(cells.tolist(), tris.tolist()))
    c = np.arange(512)
    cell_lo = np.stack([c % 8, (c // 8) % 8, c // 64], axis=1) * size
    for k in range(len(tri)):
        # a cell whose grown box the triangle's bounding box misses (by more
        # than rounding) is met by neither box below: not listed, unclipped
        far = ((tri[k].max(axis=0) < cell_lo - pad - 1e-6 - 1e-9)
               | (tri[k].min(axis=0) > cell_lo + size + pad + 1e-6 + 1e-9)).any(axis=1)
        for c in np.flatnonzero(far).tolist():
            assert (c, k) not in listed, (c, k)
        for c in np.flatnonzero(~far).tolist():
            lo = cell_lo[c]
            hi = lo + size
            if _meets_box(tri[k], lo - pad + 1e-6, hi + pad - 1e-6):
                assert (c, k) in listed, (c, k)
            elif not _meets_box(tri[k], lo - pad - 1e-6, hi + pad + 1e-6):
                assert (c, k) not in listed, (c, k)


# --- single calls give the batch's answers -------------------------------------------

def test_one_point_locate_is_the_batch_answer(mesh):
    rng = np.random.default_rng(9)
    P = np.vstack([mesh.random_points(200, seed=10), rng.uniform(-1.2 * H, 1.2 * H, (100, 3)),
                   mesh.vertices[:50].astype(np.float64)])
    batch = mesh.locate(P)
    for p, t in zip(P, batch):
        for form in (p, tuple(p.tolist()), list(p.tolist()), p.astype(np.float32).astype(float)):
            got = mesh.locate(form)
            assert got.dtype == np.int64 and got.shape == (1,) and got[0] == t
    assert mesh.locate([np.nan, 0, 0])[0] == -1
    assert mesh.locate((0, 0, 10))[0] == mesh.locate(np.array([[0.0, 0.0, 10.0]]))[0]
    assert mesh.locate([True, False, 0])[0] == mesh.locate(np.array([[1.0, 0, 0]]))[0]
    with pytest.raises(QueryError, match="complex"):
        mesh.locate((1j, 0, 0))


def test_one_call_point_forms_agree(mesh):
    a, b = mesh.random_points(30, seed=12), mesh.random_points(30, seed=13)
    for x, y in zip(a, b):
        r = mesh.raycast(x, y)
        # (repr: NaN equals itself there)
        assert repr(mesh.raycast(tuple(x.tolist()), list(y.tolist())).to_dict()) \
            == repr(r.to_dict())
        p = mesh.find_path(x, y, smooth=False)
        q = mesh.find_path(tuple(x.tolist()), list(y.tolist()), smooth=False)
        assert repr(p.to_dict()) == repr(q.to_dict())


# --- start-up ------------------------------------------------------------------------

def test_components_match_scipy():
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components
    from regn.geometry.graph import components_of_pairs
    rng = np.random.default_rng(0)
    for _ in range(100):
        n = int(rng.integers(1, 80))
        k = int(rng.integers(0, 100))
        a, b = rng.integers(0, n, k), rng.integers(0, n, k)
        count, labels = components_of_pairs(n, a, b)
        ref = connected_components(coo_matrix((np.ones(k), (a, b)), shape=(n, n)), directed=False)
        assert count == ref[0] and np.array_equal(labels, ref[1])
    assert components_of_pairs(0, [], [])[0] == 0
    with pytest.raises(ValueError):
        components_of_pairs(3, [0], [3])


def test_a_path_query_imports_no_spatial_or_sparse_scipy(tmp_path, mesh):
    f = tmp_path / "m.rgn"
    regn.save(mesh, f)
    p, q = mesh.random_points(2, seed=1)
    code = ("import sys\nfrom regn.cli import main\n"
            f"main(['path', {str(f)!r}, *map(str, {p.tolist() + q.tolist()!r})])\n"
            "bad = [m for m in ('scipy.spatial', 'scipy.sparse') if m in sys.modules]\n"
            "assert not bad, bad\n")
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


def test_cells_of_the_filter_are_a_few_per_wall(mesh):
    g = sight_grid(mesh)
    n_cells = int(np.prod(g.dims))
    assert g.cell_start.shape == (n_cells + 1,) and g.clear.shape == (n_cells,)
    assert 4096 <= n_cells <= max(4096, 2 * 128 * len(g.tri))
    assert math.isclose(g.frame[1, 0] * g.frame[1, 1], 1.0)


def test_the_last_meshs_caches_go_with_it():
    """scratch() keeps the last mesh's caches at hand for single calls, but
    not beyond the mesh's life."""
    import gc
    import weakref
    import regn.query.common as Q
    m = sphere_holes_map(200, seed=3, holes=1)[0]
    m.locate((0.0, 0.0, 0.0))
    tables = weakref.ref(Q.scratch(m)["loc"]["W"])
    gone = weakref.ref(m)
    del m
    gc.collect()
    assert gone() is None and Q._LAST[1] is None and tables() is None
