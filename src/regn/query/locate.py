"""Point location: position -> grid cell -> the cell's listed tetrahedra ->
barycentric test, with an adjacency walk when the cell list misses.

Tolerance rule: a point belongs to tetrahedron t when every barycentric
coordinate is >= -BARY_TOL (dimensionless, so scale-free). A point strictly
inside (all >= +BARY_TOL) has exactly one such tetrahedron. A point on a
face, edge or vertex may be within tolerance of several; it is given the
*smallest tetrahedron index* among them (found by a flood over face
neighbours restricted to tetrahedra containing the point), so every caller
gets the same answer whichever tetrahedron was found first.

Work is chunked (``chunk`` points at a time) and never forms an N x T array.

Two methods give the same answers:

* ``method="grid"`` follows the game's chain: ``mesh.cell_of`` -> the stored
  cell list (``mesh.grid_csr``) -> barycentric tests. When no listed
  tetrahedron contains the point (a hole, or an incomplete cell list) a
  visibility walk starts from the listed candidate the point is least
  outside of (largest smallest barycentric coordinate; the nearest
  tetrahedron centre when the cell lists none) and steps across the face of
  most negative coordinate, at most ``walk_steps`` times. A walk can be
  blocked by a hole between the candidate and the point, so a point the walk
  does not reach is decided by the fine grid's lists below: an incomplete
  stored list never turns a point of the volume into -1.
* ``method="auto"`` (default) uses only a finer private acceleration grid
  (about 2 cells per tetrahedron, kept in the query scratch cache, built once
  per mesh from tetrahedron bounding boxes, so every cell lists every
  tetrahedron that can hold one of its points; each lists first the
  tetrahedron holding its centre, then the rest by volume). A point it does
  not find is outside; the stored lists play no part. The stored REGN grid
  is coarse (the format's u16 reference limit
  forces ~100 tetrahedra per cell on a 15 000-tetrahedron map), which is why
  the fine grid exists: it makes locate several times faster than
  ``scipy.spatial.Delaunay.find_simplex``.
"""

from __future__ import annotations

import numpy as np

from ..geometry import expand_cell_ranges, linear_cell
from . import as_points, scratch

BARY_TOL = 1e-9


def _prep(mesh) -> dict:
    s = scratch(mesh)
    if "loc" in s:
        return s["loc"]
    P = np.asarray(mesh.tet_points, dtype=np.float64)          # (T,4,3)
    T = len(P)
    v0 = P[:, 0, :].copy()
    A = np.transpose(P[:, 1:, :] - v0[:, None, :], (0, 2, 1))  # columns = edges
    det = np.linalg.det(A) if T else np.zeros(0)
    scale = np.abs(P - v0[:, None, :]).max(axis=(1, 2)) if T else np.zeros(0)
    bad = ~(np.abs(det) > 1e-12 * np.maximum(scale, 1e-300) ** 3)
    A_ok = A.copy()
    A_ok[bad] = np.eye(3)
    M = np.linalg.inv(A_ok) if T else np.zeros((0, 3, 3))
    M[bad] = np.nan                                             # never contains
    # vertex j -> neighbour across the face opposite it
    opp = np.asarray(mesh.opposite_slot)
    nbv = np.full((T, 4), -1, dtype=np.int64)
    rows = np.repeat(np.arange(T), 4)
    nbv[rows, opp.ravel()] = np.asarray(mesh.neighbors).ravel()
    # cell lists, each sorted by volume (largest first: found sooner)
    indptr, indices = mesh.grid_csr
    indptr = np.asarray(indptr, dtype=np.int64)
    indices = np.asarray(indices, dtype=np.int64)
    if len(indices):
        owner = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
        valid = (indices >= 0) & (indices < T)
        vol = np.zeros(len(indices))
        vol[valid] = np.asarray(mesh.tet_volumes)[indices[valid]]
        order = np.lexsort((-vol, owner))
        indices = np.where(valid, indices, -1)[order]
    W = np.concatenate([M, -np.einsum("tij,tj->ti", M, v0)[:, :, None]], axis=2)
    d = dict(W=np.ascontiguousarray(W), v0=v0, nbv=nbv, indptr=indptr, indices=indices, T=T,
             centres=P.mean(axis=1) if T else np.zeros((0, 3)))
    s["loc"] = d
    return d


def _fine(mesh, d) -> dict:
    """The private fine grid: AABB-overlap lists, centre-holder first."""
    if "fine" in d:
        return d["fine"]
    T = d["T"]
    P = np.asarray(mesh.tet_points, np.float64)
    # The frame covers the header box and every tetrahedron (a corrupt header
    # box may be flat or miss them), with no axis thinner than 1e-3 of the widest.
    lo = np.asarray(mesh.bbox_min, np.float64)
    hi = np.asarray(mesh.bbox_max, np.float64)
    if T:
        finite = np.isfinite(P).all(axis=(1, 2))
        if finite.any():
            lo = np.minimum(lo, P[finite].min(axis=(0, 1)))
            hi = np.maximum(hi, P[finite].max(axis=(0, 1)))
    ext = hi - lo
    ext = np.maximum(ext, max(1e-3 * float(ext.max()), 1e-300))
    target = min(max(2 * T, 512), 4_000_000)
    k = (target / np.prod(ext)) ** (1 / 3)
    dims = np.clip(np.round(ext * k), 1, 1024).astype(np.int64)
    # Keep the candidate lists proportional to the mesh: coarsen while the
    # tetrahedra's bounding boxes would cover too many fine cells in total.
    for _ in range(12):
        cs = ext / dims
        with np.errstate(invalid="ignore"):
            a = np.floor((P.min(axis=1) - lo) / cs - 1e-9)
            b = np.floor((P.max(axis=1) - lo) / cs + 1e-9)
        ok = np.all(np.isfinite(a) & np.isfinite(b), axis=1)
        a = np.clip(np.nan_to_num(a), 0, dims - 1).astype(np.int64)
        b = np.clip(np.nan_to_num(b), 0, dims - 1).astype(np.int64)
        total = int(np.where(ok, (b - a + 1).prod(axis=1), 0).sum())
        if total <= 64 * target or dims.max() == 1:
            break
        dims = np.maximum(dims // 2, 1)
    tid, ijk = expand_cell_ranges(a, np.where(ok[:, None], b, a - 1))
    cell = linear_cell(ijk, dims)
    del ijk
    # does the tet hold its fine cell's centre? (it goes first then)
    nx, ny = dims[0], dims[1]
    ctr = lo + (np.stack([cell % nx, (cell // nx) % ny, cell // (nx * ny)], 1) + 0.5) * cs
    holds = np.zeros(len(tid), dtype=bool)
    for s in range(0, len(tid), 262144):
        sl = slice(s, s + 262144)
        holds[sl] = bary(d, tid[sl], ctr[sl]).min(axis=1) >= -BARY_TOL
    vol = np.asarray(mesh.tet_volumes)[tid]
    order = np.lexsort((-vol, ~holds, cell))
    cell, tid = cell[order], tid[order]
    C = int(np.prod(dims))
    indptr = np.zeros(C + 1, dtype=np.int64)
    np.cumsum(np.bincount(cell, minlength=C), out=indptr[1:])
    d["fine"] = f = dict(lo=lo, cs=cs, dims=dims, indptr=indptr, indices=tid)
    return f


def _scan_fine(W, indptr, indices, pts, blo, bhi, glo, gcs, dims, tol, out):
    """The fine-grid scan: each point's fine cell, then its listed tetrahedra
    by barycentric test (smallest index among those within tolerance, the
    first strictly inside wins); -1 outside the box or in a hole. Compiled by
    :func:`_numba_locate`; find_path's compiled kernel calls it too."""
    nx, ny, nz = dims[0], dims[1], dims[2]
    for i in range(pts.shape[0]):
        x, y, z = pts[i, 0], pts[i, 1], pts[i, 2]
        res = -1
        if (x >= blo[0] and x <= bhi[0] and y >= blo[1] and y <= bhi[1]
                and z >= blo[2] and z <= bhi[2]):     # False for NaN
            ix = min(max(int(np.floor((x - glo[0]) / gcs[0])), 0), nx - 1)
            iy = min(max(int(np.floor((y - glo[1]) / gcs[1])), 0), ny - 1)
            iz = min(max(int(np.floor((z - glo[2]) / gcs[2])), 0), nz - 1)
            c = (iz * ny + iy) * nx + ix
            for r in range(indptr[c], indptr[c + 1]):
                t = indices[r]
                l1 = W[t, 0, 0] * x + W[t, 0, 1] * y + W[t, 0, 2] * z + W[t, 0, 3]
                l2 = W[t, 1, 0] * x + W[t, 1, 1] * y + W[t, 1, 2] * z + W[t, 1, 3]
                l3 = W[t, 2, 0] * x + W[t, 2, 1] * y + W[t, 2, 2] * z + W[t, 2, 3]
                l0 = 1.0 - l1 - l2 - l3
                m = min(min(l0, l1), min(l2, l3))
                if m >= -tol:           # NaN fails this test
                    if res < 0 or t < res:
                        res = t
                    if m >= tol:        # strictly inside: unique
                        res = t
                        break
        out[i] = res
    return out


_NB = {}


def _numba_locate():
    """The compiled fine-grid scan (numba, lazily imported; None without it)."""
    if "loc" in _NB:
        return _NB["loc"]
    try:
        import numba
    except Exception:          # numba missing or broken: numpy rounds instead
        _NB["loc"] = None
        return None
    _NB["loc"] = numba.njit(cache=True, nogil=True)(_scan_fine)
    return _NB["loc"]


def fine_scan_args(mesh) -> tuple:
    """The arrays :func:`_scan_fine` reads, in its argument order, around the
    points: (before, after) tuples, built once per mesh."""
    d = _prep(mesh)
    fine = _fine(mesh, d)
    lo, hi = _box(mesh, d)
    return ((d["W"], fine["indptr"], fine["indices"]),
            (lo, hi, fine["lo"], fine["cs"], fine["dims"], BARY_TOL))


def _centre_tree(mesh, d):
    if "tree" not in d:
        from scipy.spatial import cKDTree
        d["tree"] = cKDTree(d["centres"])
    return d["tree"]


def bary(d, tets, pts) -> np.ndarray:
    """(K,) tets, (K,3) points -> (K,4) barycentric coordinates."""
    W = d["W"][tets]                                   # (K,3,4) affine rows
    x, y, z = pts[:, 0:1], pts[:, 1:2], pts[:, 2:3]
    out = np.empty((len(tets), 4))
    l123 = W[:, :, 0] * x + W[:, :, 1] * y + W[:, :, 2] * z + W[:, :, 3]
    out[:, 1:] = l123
    out[:, 0] = 1.0 - l123.sum(axis=1)
    return out


def _scan(d, indptr, indices, cells, pp):
    """Test each point against its cell's list in rounds (candidate r of every
    unresolved point at once). Returns (found, min-coordinate, best candidate)."""
    start = indptr[cells]
    cnt = indptr[cells + 1] - start
    k = len(cells)
    found = np.full(k, -1, dtype=np.int64)
    lo = np.full(k, -np.inf)
    best = np.full(k, -1, dtype=np.int64)
    bestv = np.full(k, -np.inf)
    act = np.flatnonzero(cnt > 0)
    r = 0
    while len(act):
        t = indices[start[act] + r]
        valid = t >= 0
        if not valid.all():
            t = np.where(valid, t, 0)
        b = bary(d, t, pp[act])
        m = b.min(axis=1)
        m = np.where(valid & ~np.isnan(m), m, -np.inf)
        hit = m >= -BARY_TOL
        found[act[hit]] = t[hit]
        lo[act[hit]] = m[hit]
        better = m > bestv[act]
        bestv[act[better]] = m[better]
        best[act[better]] = t[better]
        r += 1
        act = act[~hit & (cnt[act] > r)]
    return found, lo, best


def _resolve_ties(d, tets, pts, lo):
    """Points near a face of their tet: smallest index among all tets that
    contain them within tolerance (flood over face neighbours)."""
    near = np.flatnonzero((tets >= 0) & (lo < BARY_TOL))
    nbv = d["nbv"]
    for i in near:
        p = pts[i:i + 1]
        seen = {int(tets[i])}
        stack = [int(tets[i])]
        while stack and len(seen) < 4096:
            t = stack.pop()
            for u in nbv[t]:
                u = int(u)
                if u < 0 or u in seen:
                    continue
                b = bary(d, np.array([u]), p)[0]
                if b.min() >= -BARY_TOL:
                    seen.add(u)
                    stack.append(u)
        tets[i] = min(seen)
    return tets


def _walk(d, start, pts, steps):
    """Vectorised visibility walk; -1 where it leaves the volume or runs out."""
    cur = start.copy()
    res = np.full(len(pts), -1, dtype=np.int64)
    act = np.flatnonzero(cur >= 0)
    prev = np.full(len(pts), -1, dtype=np.int64)
    nbv = d["nbv"]
    for _ in range(steps):
        if not len(act):
            break
        t = cur[act]
        b = bary(d, t, pts[act])
        ok = b.min(axis=1) >= -BARY_TOL
        res[act[ok]] = t[ok]
        act, t, b = act[~ok], t[~ok], b[~ok]
        if not len(act):
            break
        nb = nbv[t]                                        # (K,4)
        # candidate exits: negative coordinate with a neighbour, not going back
        cand = (b < -BARY_TOL) & (nb >= 0) & (nb != prev[act][:, None])
        key = np.where(cand, b, np.inf)
        j = np.argmin(key, axis=1)
        has = np.isfinite(key[np.arange(len(t)), j])
        act, t, j = act[has], t[has], j[has]
        prev[act] = t
        cur[act] = nbv[t, j]
    return res


def _box(mesh, d):
    """The header box widened by a hair (points on its walls are inside)."""
    if "box" not in d:
        lo = np.asarray(mesh.bbox_min, np.float64)
        hi = np.asarray(mesh.bbox_max, np.float64)
        tol = 1e-9 * float(np.max(np.abs(np.concatenate([lo, hi]))) + 1.0)
        d["box"] = (lo - tol, hi + tol)
    return d["box"]


def locate_few(mesh, pts) -> np.ndarray:
    """:func:`locate` for a handful of validated (N,3) float64 points, with
    none of its per-call set-up (find_path's start and goal)."""
    d = _prep(mesh)
    kern = _numba_locate()
    if kern is None or d["T"] == 0:
        return locate(mesh, pts)
    fine = _fine(mesh, d)
    lo, hi = _box(mesh, d)
    out = np.empty(len(pts), dtype=np.int64)
    kern(d["W"], fine["indptr"], fine["indices"], pts, lo, hi, fine["lo"], fine["cs"],
         fine["dims"], BARY_TOL, out)
    return out


def _fine_scan(mesh, d, pp):
    """(found, smallest barycentric) of points in the box, from the fine
    grid's lists (complete: every tetrahedron whose box meets the cell)."""
    fine = _fine(mesh, d)
    fc = np.floor((pp - fine["lo"]) / fine["cs"]).astype(np.int64)
    np.clip(fc, 0, fine["dims"] - 1, out=fc)
    fc = (fc[:, 2] * fine["dims"][1] + fc[:, 1]) * fine["dims"][0] + fc[:, 0]
    found, lo, _ = _scan(d, fine["indptr"], fine["indices"], fc, pp)
    return found, lo


def locate(mesh, points, return_barycentric=False, *, method="auto",
           chunk=131072, walk_steps=None):
    """(N,3) points -> (N,) int64 tetrahedron index, -1 outside the volume.

    With ``return_barycentric`` also (N,4) barycentric coordinates in the
    order of ``mesh.tets`` columns (NaN where -1). NaN/inf points -> -1.
    ``method`` is ``"auto"`` or ``"grid"`` (see the module docstring).
    """
    from ..errors import QueryError
    if method not in ("auto", "grid"):
        raise QueryError(f"locate method must be 'auto' or 'grid', not {method!r}")
    pts = as_points(points)
    n = len(pts)
    d = _prep(mesh)
    out = np.full(n, -1, dtype=np.int64)
    if d["T"] == 0 or n == 0:
        return (out, np.full((n, 4), np.nan)) if return_barycentric else out
    if walk_steps is None:
        walk_steps = int(8 * round(d["T"] ** (1 / 3))) + 64
    lo_box, hi_box = _box(mesh, d)
    fine = _fine(mesh, d) if method == "auto" else None
    kern = _numba_locate() if fine is not None else None
    if kern is not None:
        kern(d["W"], fine["indptr"], fine["indices"], np.ascontiguousarray(pts),
             lo_box, hi_box, fine["lo"], fine["cs"], fine["dims"], BARY_TOL, out)
    for c0 in range(0, n if kern is None else 0, chunk):
        p = pts[c0:c0 + chunk]
        with np.errstate(invalid="ignore"):
            ok = np.all(np.isfinite(p), axis=1) & np.all(p >= lo_box, axis=1) \
                & np.all(p <= hi_box, axis=1)
        idx = np.flatnonzero(ok)
        pp = p[idx]
        if fine is not None:
            # the fine lists hold every tet near the point: ties resolve locally
            found, lo = _fine_scan(mesh, d, pp)
        else:
            cells = np.asarray(mesh.cell_of(pp), dtype=np.int64)
            found, lo, best = _scan(d, d["indptr"], d["indices"], cells, pp)
            miss = np.flatnonzero(found < 0)
            if len(miss):
                st = best[miss]
                none = st < 0
                if np.any(none):
                    _, nn = _centre_tree(mesh, d).query(pp[miss[none]])
                    st[none] = nn
                w = _walk(d, st, pp[miss], walk_steps)
                found[miss] = w
                wi = miss[w >= 0]
                if len(wi):
                    lo[wi] = bary(d, found[wi], pp[wi]).min(axis=1)
                # a walk blocked by a hole proves nothing: the complete fine
                # lists decide, so -1 always means outside the volume
                lost = miss[w < 0]
                if len(lost):
                    found[lost], lo[lost] = _fine_scan(mesh, d, pp[lost])
        found = _resolve_ties(d, found, pp, lo)
        out[c0 + idx] = found
    if not return_barycentric:
        return out
    bc = np.full((n, 4), np.nan)
    ins = np.flatnonzero(out >= 0)
    for c0 in range(0, len(ins), chunk):
        k = ins[c0:c0 + chunk]
        bc[k] = bary(d, out[k], pts[k])
    return out, bc
