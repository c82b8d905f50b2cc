"""The compiled segment walk (raycast / line_of_sight) against the numpy walk
it replaced and an independent segment/boundary-triangle brute force; the
walk kernel's rules on hand-made tetrahedra."""

import importlib
import math
import tracemalloc

import numpy as np
import pytest

from regn import status
from regn.errors import QueryError
from regn.query.sight import _raycast_kernels as K
from regn.query.locating.locate import _prep, locate
from regn.tolerances import BARY_TOL

from conftest import assert_numba_not_imported, sphere_holes_map

rc_mod = importlib.import_module("regn.query.sight.raycast")   # the module, not the function

L = 50_000.0


def _make(n=700, seed=5, holes=6, dims=(6, 6, 6)):
    return sphere_holes_map(n, seed, holes, dims, L)[0]


@pytest.fixture(scope="module")
def mesh():
    return _make()


# --- the numpy walk this module replaced (kept as the reference; ref_raycast
# takes its one-tetrahedron steps in Python floats, the same arithmetic) ---

def bary(d, tets, pts):
    """(K,) tets, (K,3) points -> (K,4) barycentric coordinates, from the
    affine rows locate keeps (the kernels' arithmetic, operation for
    operation: l_r = ((w0 x + w1 y) + w2 z) + w3, l0 = 1 - ((l1 + l2) + l3))."""
    W = d["W"].reshape(-1, 3, 4)[tets]                 # (K,3,4) affine rows
    x, y, z = pts[:, 0:1], pts[:, 1:2], pts[:, 2:3]
    out = np.empty((len(tets), 4))
    l123 = W[:, :, 0] * x + W[:, :, 1] * y + W[:, :, 2] * z + W[:, :, 3]
    out[:, 1:] = l123
    out[:, 0] = 1.0 - l123.sum(axis=1)
    return out


_ROWS = {}


def _rows_as_lists(d):
    """W's rows as lists of Python floats (made once a mesh)."""
    key = id(d["W"])
    if key not in _ROWS:
        _ROWS.clear()
        _ROWS[key] = (d["W"], d["W"].reshape(-1, 12).tolist())
    return _ROWS[key][1]


TIES = {"raycast": 0, "los": 0}      # how often each reference took its edge-tie branch
CYCLES = {"raycast": 0, "los": 0}    # ... and left a cycle


def _ref_forward_exit(d, t, a, b, s_cur):
    """(slot, fraction) of the first decreasing coordinate of tet t reaching 0
    strictly past s_cur (first slot on ties), or (-1, inf)."""
    la = bary(d, np.array([t]), a[None])[0]
    dl = bary(d, np.array([t]), b[None])[0] - la
    with np.errstate(divide="ignore", invalid="ignore"):
        ss = np.where(dl < 0, -la / dl, np.inf)
    ss = np.where(ss > s_cur, ss, np.inf)              # (NaN fails the test)
    j = int(np.argmin(ss))
    return (j, float(ss[j])) if np.isfinite(ss[j]) else (-1, np.inf)


def _ref_exit(d, t, a, b, s_cur):
    la = bary(d, t, a)
    lb = bary(d, t, b)
    inside_b = lb.min(axis=1) >= -BARY_TOL
    dl = lb - la
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(dl < 0, -la / dl, np.inf)
    s = np.where(np.isnan(s), np.inf, s)
    s = np.maximum(s, s_cur[:, None])
    j = np.argmin(s, axis=1)
    return s[np.arange(len(t)), j], j, inside_b


def _ref_exit_one(row, a, b, s_cur):
    """:func:`_ref_exit` of one tetrahedron, on Python floats: ``row`` its
    12 affine numbers (W's row as a list), a and b 3-lists; the same
    arithmetic (IEEE doubles, the same order of operations), without
    numpy's cost per call."""
    la, lb = _bary_one(row, a), _bary_one(row, b)
    s = []
    for x, y in zip(la, lb):
        d = y - x
        v = -x / d if d < 0 else math.inf
        s.append(max(math.inf if math.isnan(v) else v, s_cur))
    j = min(range(4), key=s.__getitem__)         # the first least, as argmin
    return s[j], j, min(lb) >= -BARY_TOL


def _bary_one(w, p):
    """:func:`bary` of one point in one tetrahedron (a list of 4 floats)."""
    x, y, z = p
    l1 = w[0] * x + w[1] * y + w[2] * z + w[3]
    l2 = w[4] * x + w[5] * y + w[6] * z + w[7]
    l3 = w[8] * x + w[9] * y + w[10] * z + w[11]
    return [1.0 - (l1 + l2 + l3), l1, l2, l3]


def ref_raycast(mesh, a, b):
    """-> (status, face, t, point, normal, tets)."""
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    nan3 = np.full(3, np.nan)
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        return ("start_outside" if not np.all(np.isfinite(a)) else "lost", -1, np.nan,
                nan3, nan3, [])
    t = int(locate(mesh, a[None])[0])
    if t < 0:
        return ("start_outside", -1, np.nan, nan3, nan3, [])
    d = _prep(mesh)
    nbv = d["nbv"]
    rows = _rows_as_lists(d)
    a_list, b_list = a.tolist(), b.tolist()
    opp = np.asarray(mesh.opposite_slot)
    tf = np.asarray(mesh.tet_faces)
    crossed = [t]
    prev = -1
    s_cur = 0.0
    entered = []                         # (tet, came from) entered at fraction s_cur
    for _ in range(d["T"] + 8):
        s, j, inb = _ref_exit_one(rows[t], a_list, b_list, s_cur)
        if inb:
            return ("clear", -1, 1.0, b.copy(), nan3, crossed)
        nxt = int(nbv[t, j])
        if nxt == prev and nxt >= 0:
            # edge tie: the other decreasing coordinate that reaches 0 first
            TIES["raycast"] += 1
            la, lb = bary(d, np.array([t]), a[None])[0], bary(d, np.array([t]), b[None])[0]
            dl = lb - la
            with np.errstate(divide="ignore", invalid="ignore"):
                ss = np.where((dl < 0) & (nbv[t] != prev) & (np.arange(4) != j), -la / dl, np.inf)
            if not np.isfinite(ss.min()):
                break
            j = int(np.argmin(ss))
            nxt = int(nbv[t, j])
        if s > s_cur:
            entered = []
        elif (nxt, t) in entered[:K.RING]:
            # it would go round in circles: the first crossing past s_cur instead
            CYCLES["raycast"] += 1
            j, s = _ref_forward_exit(d, t, a, b, s_cur)
            if j < 0:
                break
            nxt = int(nbv[t, j])
            entered = []
        entered.append((nxt, t))
        if not s <= 1.0 + 1e-12:             # the exit lies past b: not clear
            break
        s_cur = s
        if nxt < 0:
            slot = int(np.flatnonzero(opp[t] == j)[0])
            f = int(tf[t, slot])
            n = np.asarray(mesh.face_normals[f], dtype=np.float64).copy()
            c = np.asarray(mesh.face_centroids[f]) - np.asarray(mesh.tet_points[t]).mean(0)
            if np.dot(n, c) < 0:
                n = -n
            s_hit = min(s_cur, 1.0)
            return ("hit", f, s_hit, a + s_hit * (b - a), n, crossed)
        prev, t = t, nxt
        crossed.append(t)
    return ("lost", -1, np.nan, nan3, nan3, crossed)


def ref_line_of_sight(mesh, a, b):
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    n = len(a)
    out = np.zeros(n, dtype=bool)
    cur = locate(mesh, a)
    okb = np.all(np.isfinite(b), axis=1)
    act = np.flatnonzero((cur >= 0) & okb)
    d = _prep(mesh)
    nbv = d["nbv"]
    s_cur = np.zeros(n)
    prev = np.full(n, -1, dtype=np.int64)
    entered = [[] for _ in range(n)]      # (tet, came from) entered at fraction s_cur
    for _ in range(d["T"] + 8):
        if not len(act):
            break
        t = cur[act]
        s, j, inb = _ref_exit(d, t, a[act], b[act], s_cur[act])
        out[act[inb]] = True
        keep = ~inb
        act, t, s, j = act[keep], t[keep], s[keep], j[keep]
        nxt = nbv[t, j]
        back = (nxt == prev[act]) & (nxt >= 0)
        if np.any(back):
            TIES["los"] += int(back.sum())
            bi = np.flatnonzero(back)
            la = bary(d, t[bi], a[act[bi]])
            lb = bary(d, t[bi], b[act[bi]])
            dl = lb - la
            bad = (dl >= 0) | (nbv[t[bi]] == prev[act[bi]][:, None])
            bad[np.arange(len(bi)), j[bi]] = True
            with np.errstate(divide="ignore", invalid="ignore"):
                ss = np.where(bad, np.inf, -la / dl)
            jj = np.argmin(ss, axis=1)
            fin = np.isfinite(ss[np.arange(len(bi)), jj])
            nxt[bi] = np.where(fin, nbv[t[bi], jj], -1)
        for r in range(len(act)):
            i = act[r]
            if s[r] > s_cur[i]:
                entered[i] = []
            elif nxt[r] >= 0 and (nxt[r], t[r]) in entered[i][:K.RING]:
                CYCLES["los"] += 1
                jr, s[r] = _ref_forward_exit(d, t[r], a[i], b[i], s_cur[i])
                nxt[r] = nbv[t[r], jr] if jr >= 0 else -1
                entered[i] = []
            entered[i].append((nxt[r], t[r]))
        go = (nxt >= 0) & (s <= 1.0 + 1e-12)
        act, t, nxt, s = act[go], t[go], nxt[go], s[go]
        prev[act] = t
        cur[act] = nxt
        s_cur[act] = s
    return out


# --- segment families ---------------------------------------------------------

def random_segments(mesh, n, seed):
    rng = np.random.default_rng(seed)
    k = n // 4
    A = np.vstack([mesh.random_points(2 * k, seed=seed), rng.uniform(-L, L, (n - 2 * k, 3))])
    B = np.vstack([mesh.random_points(k, seed=seed + 1), rng.uniform(-L, L, (k, 3)),
                   rng.uniform(-1.4 * L, 1.4 * L, (n - 2 * k, 3))])
    return A, B


#: seeds of adversarial segments tried at most, until a walk has gone round in circles
MAX_SEEDS = 10


def adversarial_segments(mesh, seed):
    """Segments through vertices, along edges, lying in faces, of zero length,
    starting on boundary faces, leaving the box, and non-finite ones."""
    rng = np.random.default_rng(seed)
    V = mesh.vertices.astype(np.float64)
    tv = V[mesh.tets]                                        # (T,4,3)
    fv = V[mesh.face_vertices]                               # (F,3,3)
    bf = fv[mesh.boundary_faces]
    inside = mesh.random_points(400, seed=seed)
    A, B = [], []

    def add(a, b):
        A.append(np.asarray(a, np.float64))
        B.append(np.asarray(b, np.float64))

    for i in range(200):                       # vertex to vertex, and through a vertex
        v = V[rng.integers(len(V))]
        add(v, V[rng.integers(len(V))])
        add(inside[i], 2 * v - inside[i])
        add(inside[i], v)
        add(v, inside[i])
    for i in range(200):                       # along edges, beyond them, edge midpoints
        t = tv[rng.integers(len(tv))]
        p, q = t[rng.choice(4, 2, replace=False)]
        add(p + 0.25 * (q - p), p + 0.75 * (q - p))
        add(p, p + 3.0 * (q - p))
        add((p + q) / 2, inside[i])
    for i in range(200):                       # in a face's plane
        f = fv[rng.integers(len(fv))]
        w1, w2 = rng.dirichlet(np.ones(3), 2)
        add(w1 @ f, w2 @ f)
        add(w1 @ f, f[0] + 2.0 * (w2 @ f - f[0]))
        add(f.mean(0), f.mean(0) + (f[1] - f[0]))
    for i in range(150):                       # on boundary faces (walls and holes)
        f = bf[rng.integers(len(bf))]
        p = rng.dirichlet(np.ones(3)) @ f
        add(p, inside[i])
        add(p, rng.dirichlet(np.ones(3)) @ bf[rng.integers(len(bf))])
        add(inside[i], p)
    for i in range(100):                       # zero length
        add(inside[i], inside[i])
        v = V[rng.integers(len(V))]
        add(v, v)
    for i in range(100):                       # axis-aligned on a box wall
        p = rng.uniform(-L, L, 3)
        ax = rng.integers(3)
        p[ax] = rng.choice([-L, L])
        q = p.copy()
        q[(ax + 1) % 3] = rng.uniform(-L, L)
        add(p, q)
        add(inside[i], p + (p - inside[i]))       # leaves the box
    for i in range(60):                        # starts outside the box
        add(rng.uniform(-3 * L, 3 * L, 3) + [2 * L, 0, 0], inside[i])
    for bad in (np.nan, np.inf, -np.inf):      # non-finite coordinates
        for k in range(3):
            p = inside[k].copy()
            p[k] = bad
            add(p, inside[k + 3])
            add(inside[k + 3], p)
            add(p, p)
    add([1e300, 1e300, 1e300], inside[0])
    add(inside[0], [1e300, -1e300, 1e300])
    add(inside[0], inside[0] + 1e-300)
    return np.array(A), np.array(B)


def _same_raycast(r, ref):
    status, face, t, point, normal, tets = ref
    assert r.status == status and r.clear == (status == "clear")
    assert r.face == face
    assert (r.t == t) or (math.isnan(r.t) and math.isnan(t))
    np.testing.assert_array_equal(r.point, point)
    np.testing.assert_array_equal(r.normal, normal)
    assert r.tets.dtype == np.int64
    np.testing.assert_array_equal(r.tets, np.asarray(tets, np.int64))


# --- tests --------------------------------------------------------------------
def _one_raycast(mesh, a, b):
    """Mesh.raycast's answer; for a non-finite end (which it refuses with a
    QueryError) the walk's own, which a batch's row gets."""
    if np.isfinite(a).all() and np.isfinite(b).all():
        return mesh.raycast(a, b)
    with pytest.raises(QueryError, match="not a finite coordinate"):
        mesh.raycast(a, b)
    return rc_mod.raycast(mesh, a, b)



def test_line_of_sight_matches_numpy_walk(mesh):
    A, B = random_segments(mesh, 6000, seed=31)
    got = mesh.line_of_sight(A, B)
    assert got.dtype == bool and got.shape == (6000,)
    np.testing.assert_array_equal(got, ref_line_of_sight(mesh, A, B))
    assert 0.2 < got.mean() < 0.9            # both outcomes well represented


def test_adversarial_segments_match_numpy_walk(mesh):
    # A segment that makes a walk go round in circles is rare (about one seed
    # in four has one, which seed depends on qhull's mesh and numpy's
    # random stream), so seeds are added until both rules have met one.
    # Seed 11 is the first from 7 that has one with this numpy and qhull (the
    # reference takes seconds a seed): it is tried first, then the others.
    before, cycles = dict(TIES), dict(CYCLES)
    for seed in [11] + [s for s in range(7, 7 + MAX_SEEDS) if s != 11]:
        A, B = adversarial_segments(mesh, seed=seed)
        np.testing.assert_array_equal(mesh.line_of_sight(A, B), ref_line_of_sight(mesh, A, B))
        for a, b in zip(A, B):
            _same_raycast(_one_raycast(mesh, a, b), ref_raycast(mesh, a, b))
        if CYCLES["los"] > cycles["los"] and CYCLES["raycast"] > cycles["raycast"]:
            break
    # the edge-tie and cycle branches were exercised by both rules (a segment
    # along an edge goes round the edge's tets at one fraction)
    assert TIES["los"] > before["los"] and TIES["raycast"] > before["raycast"]
    assert CYCLES["los"] > cycles["los"] and CYCLES["raycast"] > cycles["raycast"]


def test_line_of_sight_is_raycast_clear(mesh):
    """One walk, one answer: the batch query never disagrees with the
    single-segment report."""
    A, B = adversarial_segments(mesh, seed=17)
    R, S = random_segments(mesh, 3000, seed=18)
    A, B = np.vstack([A, R]), np.vstack([B, S])
    los = mesh.line_of_sight(A, B)
    np.testing.assert_array_equal(los, [_one_raycast(mesh, a, b).clear for a, b in zip(A, B)])
    assert 0.1 < los.mean() < 0.9


def test_raycast_many_is_raycast_segment_by_segment(mesh):
    A, B = adversarial_segments(mesh, seed=23)
    R, S = random_segments(mesh, 2000, seed=24)
    A, B = np.vstack([A, R]), np.vstack([B, S])
    many = mesh.raycast_many(A, B)
    assert len(many) == len(A)
    for i, (a, b) in enumerate(zip(A, B)):
        r = _one_raycast(mesh, a, b)
        assert (many.status[i], many.clear[i], many.face[i]) == (r.status, r.clear, r.face)
        np.testing.assert_array_equal(many.point[i], r.point)
        np.testing.assert_array_equal(many.normal[i], r.normal)
        assert many.t[i] == r.t or (math.isnan(many.t[i]) and math.isnan(r.t))
    assert {"clear", "hit", "start_outside", "lost"} <= set(many.status.tolist())
    np.testing.assert_array_equal(mesh.line_of_sight(A, B), many.clear)
    empty = mesh.raycast_many(np.zeros((0, 3)), np.zeros((0, 3)))
    assert len(empty) == 0 and empty.point.shape == (0, 3)


def test_hit_without_exit_face_is_named(mesh):
    """A hit whose tetrahedron's face planes leave its exit vertex out of no
    face (here: the exit table emptied) is a QueryError naming that
    tetrahedron, from raycast and from raycast_many (the first such hit)."""
    import regn
    from regn.errors import QueryError
    from regn.query.common import scratch
    A, B = random_segments(mesh, 400, seed=41)
    hits = mesh.raycast_many(A, B)
    k = int(np.flatnonzero(hits.status == "hit")[0])
    last = int(mesh.raycast(A[k], B[k]).tets[-1])
    broken = regn.loads(mesh.dumps())
    exit_face, _ = rc_mod._exits(broken)
    exit_face[:] = -1
    assert scratch(broken)["exits"][0] is exit_face
    with pytest.raises(QueryError, match=f"tetrahedron {last}: no face slot"):
        broken.raycast_many(A, B)
    with pytest.raises(QueryError, match=f"tetrahedron {last}: no face slot"):
        broken.raycast(A[k], B[k])
    # rows before the first hit are fine on their own
    np.testing.assert_array_equal(broken.raycast_many(A[:k], B[:k]).status, hits.status[:k])


def test_raycast_matches_numpy_walk(mesh):
    A, B = random_segments(mesh, 1500, seed=41)
    statuses = set()
    for a, b in zip(A, B):
        r = mesh.raycast(a, b)
        _same_raycast(r, ref_raycast(mesh, a, b))
        statuses.add(r.status)
    assert {"clear", "hit", "start_outside"} <= statuses


def test_long_walk_rerun_records_every_tet(mesh, monkeypatch):
    A, B = random_segments(mesh, 100, seed=61)
    want = [mesh.raycast(a, b).tets for a, b in zip(A, B)]
    monkeypatch.setattr(rc_mod, "_CROSSED_START", 2)
    for a, b, w in zip(A, B, want):
        np.testing.assert_array_equal(mesh.raycast(a, b).tets, w)
    assert max(len(w) for w in want) > 2


def _first_boundary_hit(mesh, a, b):
    """Independent: smallest fraction t in (0, 1] where the segment meets a
    boundary triangle (Moller-Trumbore over all of them), with its faces."""
    fid = np.asarray(mesh.boundary_faces)
    tri = mesh.vertices[mesh.face_vertices[fid]].astype(np.float64)
    p0, e1, e2 = tri[:, 0], tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]
    d = b - a
    h = np.cross(d, e2)
    det = (e1 * h).sum(1)
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = 1.0 / det
        sv = a - p0
        u = (sv * h).sum(1) * inv
        q = np.cross(sv, e1)
        v = (q @ d) * inv
        t = (q * e2).sum(1) * inv
    ok = (np.abs(det) > 0) & (u >= -1e-9) & (v >= -1e-9) & (u + v <= 1 + 1e-9) \
        & (t > 1e-9) & (t <= 1)
    if not ok.any():
        return None, []
    tmin = t[ok].min()
    return tmin, fid[ok & (t <= tmin + 1e-7)]


def test_raycast_hit_against_brute_force_triangles(mesh):
    A = mesh.random_points(300, seed=71)
    B = np.random.default_rng(72).uniform(-L, L, (300, 3))
    hits = 0
    for a, b in zip(A, B):
        r = mesh.raycast(a, b)
        ref, faces = _first_boundary_hit(mesh, a, b)
        if ref is None:
            assert r.clear and r.status == "clear" and mesh.locate(b[None])[0] >= 0
            continue
        hits += 1
        assert r.status == "hit" and not r.clear
        assert r.t == pytest.approx(ref, abs=1e-7)
        assert r.face in faces                  # the first triangle hit (ties at edges)
        np.testing.assert_allclose(r.point, a + ref * (b - a), atol=1e-3)
        tri = mesh.vertices[mesh.face_vertices[r.face]].astype(np.float64)
        g = np.cross(tri[1] - tri[0], tri[2] - tri[0])
        g /= np.linalg.norm(g)
        assert abs(abs(np.dot(r.normal, g)) - 1) < 1e-6          # the face's normal
        assert np.dot(r.normal, b - a) > 0                        # outward: along the ray
        assert abs(np.dot(r.point - tri[0], g)) < 1e-6 * L        # the point is on it
    assert hits > 50


def test_non_finite_and_outside_input(mesh):
    p = mesh.random_points(1, seed=3)[0]
    for bad in (np.nan, np.inf, -np.inf):
        q = p.copy()
        q[1] = bad
        assert rc_mod.raycast(mesh, q, p).status == "start_outside"
        assert rc_mod.raycast(mesh, p, q).status == "lost"
        with pytest.raises(QueryError, match="a: y is"):
            mesh.raycast(q, p)
        with pytest.raises(QueryError, match="b: y is"):
            mesh.raycast(p, q)
        assert not mesh.line_of_sight([q, p, q], [p, q, q]).any()
    assert mesh.raycast([3 * L, 0, 0], p).status == "start_outside"
    r = mesh.raycast(p, [3 * L, 0, 0])
    assert r.status == "hit" and 0 < r.t < 1
    assert mesh.raycast(p, p).clear and mesh.line_of_sight([p], [p])[0]
    assert mesh.line_of_sight(np.zeros((0, 3)), np.zeros((0, 3))).shape == (0,)


def _seen():
    return np.empty((K.RING, 2), np.int64)


def test_kernel_stops_on_cycles_and_nan_geometry():
    """A corrupted adjacency cycle ends as soon as it would repeat itself (no
    way forward: stuck), or at the step cap; NaN rows never loop; a neighbour
    index out of range is never followed."""
    row = _tet_row(UNIT)
    nbv = np.array([[1] * 4, [2] * 4, [0] * 4], np.int64)   # 0 -> 1 -> 2 -> 0
    buf = np.empty(100, np.int64)

    def run(W, a, b, nb=nbv, cap=50):
        return K.walk_segment(W, nb, *a, *b, 0, cap, buf, _seen())

    W = np.tile(row, (3, 1))                   # three copies of the unit tet
    # b is far along x: every copy's exit is the x face, at s = 0.9 / 4.9;
    # entering 1 from 0 again at that fraction would repeat the walk, and no
    # coordinate crosses later
    out = run(W, (0.1, 0.1, 0.1), (5.0, 0.2, 0.2))
    assert out[0] == K.STUCK and out[4] == 4
    np.testing.assert_array_equal(buf[:4], [0, 1, 2, 0])
    out = run(W, (0.1, 0.1, 0.1), (5.0, 0.2, 0.2), cap=2)
    assert out[0] == status.LOST and out[4] == 3
    # a outside its tet, the exit (s = 2.8) past b: not clear, and no guess
    assert run(W, (-2.0, 0.1, 0.1), (-1.0, 0.1, 0.1))[0] == K.BEYOND
    Wn = np.full_like(W, np.nan)
    assert run(Wn, (0.1, 0.1, 0.1), (5.0, 0.2, 0.2))[0] == K.BEYOND
    bad = nbv.copy()
    bad[0, 1] = 7                              # slot 1 of tet 0 -> out of range
    out = run(W, (0.1, 0.1, 0.1), (-5.0, 0.1, 0.1), bad)
    assert out[0] == K.OUT_OF_RANGE and out[4] == 1


def _tet_row(P):
    """The affine barycentric rows of one tet, as regn.query.locating.locate._prep."""
    P = np.asarray(P, np.float64)
    M = np.linalg.inv((P[1:] - P[0]).T)
    return np.concatenate([M, -(M @ P[0])[:, None]], axis=1).reshape(1, 12)


UNIT = [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]
BIG = [[-100, -100, -100], [300, -100, -100], [-100, 300, -100], [-100, -100, 300]]


# In the unit tet the coordinates are l0 = 1-x-y-z, l1 = x, l2 = y, l3 = z.
# Tets 0-2 are unit tets, tet 3 a big one holding every b below; the
# adjacency is made up so that each choice sends the walk somewhere
# different. (a, b, tet 0's and tet 1's neighbours, expected (outcome, last
# tet, exit slot))
TIE_CASES = {
    # leaves tet 0 by y (slot 2) into tet 1, whose slot 2 leads back: the
    # other decreasing coordinates are x (slot 1, crossing 1/3) and z (slot
    # 3, 1/16): the earliest crossing, z, leads to tet 3 (clear); the lowest
    # slot, x, would have led to tet 2 and its wall
    "the earliest crossing, not the lowest slot": (
        (0.1, 0.1, 0.1), (-0.2, -2.0, -1.5), [-1, -1, 1, -1], [-1, 2, 0, 3],
        ("CLEAR", 3, -1)),
    # x and z cross at the same fraction: the first slot (1)
    "equal crossings take the first slot": (
        (0.1, 0.1, 0.1), (-1.5, -2.0, -1.5), [-1, -1, 1, -1], [-1, 3, 0, 2],
        ("CLEAR", 3, -1)),
    # x is constant along the segment: not a way out
    "a constant coordinate is no exit": (
        (0.1, 0.1, 0.1), (0.1, -2.0, -1.5), [-1, -1, 1, -1], [-1, 2, 0, 3],
        ("CLEAR", 3, -1)),
    # only y decreases in tet 1, and it leads back: stuck, not a guess
    "no other way out": (
        (0.1, 0.1, 0.1), (0.1, -2.0, 0.1), [-1, -1, 1, -1], [-1, 3, 0, 3],
        ("STUCK", 1, -1)),
}
OUTCOMES = {"CLEAR": status.CLEAR, "STUCK": K.STUCK}


@pytest.mark.parametrize("case", sorted(TIE_CASES))
def test_kernel_edge_tie_rule(case):
    a, b, nb0, nb1, want = TIE_CASES[case]
    W = np.concatenate([_tet_row(UNIT)] * 3 + [_tet_row(BIG)])
    nbv = np.array([nb0, nb1, [-1] * 4, [-1] * 4], np.int64)
    buf = np.empty(16, np.int64)
    out = K.walk_segment(W, nbv, *a, *b, 0, 12, buf, _seen())
    assert (out[0], out[1], out[2]) == (OUTCOMES[want[0]], want[1], want[2]), out


def test_kernel_fraction_rules():
    buf = np.empty(4, np.int64)
    walls = np.full((1, 4), -1, np.int64)
    W = _tet_row(UNIT)
    # straight out through the slanted face: l0 = 0.7 - 1.9 s reaches 0 at s = 0.7 / 1.9
    out = K.walk_segment(W, walls, 0.1, 0.1, 0.1, 2.0, 0.1, 0.1, 0, 9, buf, _seen())
    assert (out[0], out[2]) == (status.HIT, 0)
    assert out[3] == pytest.approx(0.7 / 1.9, rel=1e-12)
    # a NaN crossing counts as never: in a tet 1e-300 across, x = 1e10
    # overflows l1 to inf and -l1 / dl1 = -inf / -inf; the exit is y (slot 2)
    W = _tet_row(np.array(UNIT) * 1e-300)
    out = K.walk_segment(W, np.array([[-1, 0, -1, -1]]), 1e10, 1e-301, 1e-301,
                         1e-301, -1e-300, 1e-301, 0, 9, buf, _seen())
    assert (out[0], out[2]) == (status.HIT, 2)
    assert out[3] == pytest.approx(0.1 / 1.1, rel=1e-9)


def test_batch_memory_is_proportional(mesh):
    A, B = random_segments(mesh, 20000, seed=81)
    mesh.line_of_sight(A[:10], B[:10])
    tracemalloc.start()
    mesh.line_of_sight(A, B)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 200 * len(A)                 # an N x T array would be ~N * T bytes


def test_help_and_import_do_not_load_numba():
    assert_numba_not_imported(
        "import contextlib, io\n"
        "from regn.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        "        main(['--help'])\n"
        "    except SystemExit:\n"
        "        pass\n"
        "import regn.query.sight.raycast\n")
