"""Slow, plain numpy references that judge regn.geometry's compiled kernels.

:func:`pinches_reference` counts a boundary's pinch edges and vertices in
plain Python; :func:`interiors_overlap_depth` decides whether two
tetrahedra's interiors overlap by a linear programme;
:func:`overlapping_pairs_reference` tests every pair of a set of tetrahedra
by separating axes, in numpy.

:func:`tets_intersect_boxes` is the full separating-axis test, pair by pair
(obviously right: two convex sets are disjoint exactly when one of these
axes separates them). :func:`grid_membership_reference` is the grid rule as
it was written in numpy before the kernel became its only implementation:
the same candidates and shortcuts, with numpy's NaN and overflow behaviour,
which is what the kernel must reproduce on hostile inputs.
"""

import numpy as np

from regn.geometry import (FACE_SLOTS, TET_EDGES, cell_coords, expand_cell_ranges,
                           linear_cell)
from regn.tolerances import TOUCH_REL

_CORNERS = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)],
                    dtype=np.float64)


def tets_intersect_boxes(tet_points, box_lo, box_hi, eps=0.0) -> np.ndarray:
    """Exact closed tetrahedron/axis-aligned-box intersection, pair by pair.

    ``tet_points`` (P,4,3), ``box_lo``/``box_hi`` (P,3). Separating-axis test
    over the 3 box axes, the 4 face normals and the 18 edge x axis crosses;
    touching counts as intersecting, and ``eps`` widens every interval.
    """
    p = np.asarray(tet_points, dtype=np.float64)
    lo = np.asarray(box_lo, dtype=np.float64)
    hi = np.asarray(box_hi, dtype=np.float64)
    centre = (lo + hi) / 2
    half = (hi - lo) / 2
    q = p - centre[:, None, :]                     # box centred at the origin
    hit = np.all((q.min(axis=1) <= half + eps) & (q.max(axis=1) >= -half - eps), axis=1)
    edges = q[:, TET_EDGES[:, 1]] - q[:, TET_EDGES[:, 0]]           # (P,6,3)
    fs = FACE_SLOTS
    normals = np.cross(q[:, fs[:, 1]] - q[:, fs[:, 0]], q[:, fs[:, 2]] - q[:, fs[:, 0]])
    axes_list = [normals]
    for k in range(3):
        unit = np.zeros(3)
        unit[k] = 1.0
        axes_list.append(np.cross(edges, unit))
    axes = np.concatenate(axes_list, axis=1)                          # (P,22,3)
    proj = np.einsum("pad,pvd->pav", axes, q)                         # (P,22,4)
    radius = np.einsum("pad,pd->pa", np.abs(axes), half)              # (P,22)
    scale = np.linalg.norm(axes, axis=2) * eps
    separated = (proj.min(axis=2) > radius + scale) | (proj.max(axis=2) < -radius - scale)
    return hit & ~separated.any(axis=1)


def grid_membership_reference(tet_points, bbox_min, cell_size, dims):
    """:func:`regn.geometry.grid_membership` in numpy: (cells, tets) sorted
    by cell then tetrahedron."""
    pts = np.asarray(tet_points, dtype=np.float64)
    if len(pts) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    dims_a = np.asarray(dims, dtype=np.int64)
    bbox_min = np.asarray(bbox_min, np.float64)
    cell_size = np.asarray(cell_size, np.float64)
    eps = TOUCH_REL * float(np.max(cell_size * dims_a))
    pmin = np.minimum(np.minimum(pts[:, 0], pts[:, 1]), np.minimum(pts[:, 2], pts[:, 3]))
    pmax = np.maximum(np.maximum(pts[:, 0], pts[:, 1]), np.maximum(pts[:, 2], pts[:, 3]))
    lo = cell_coords(pmin - eps, bbox_min, cell_size, dims_a)
    hi = cell_coords(pmax + eps, bbox_min, cell_size, dims_a)
    tid, ijk = expand_cell_ranges(lo, hi)
    cand = linear_cell(ijk, dims_a)
    # a vertex inside the closed cell box: a sure hit
    sure = np.zeros(len(tid), dtype=bool)
    blo = bbox_min + ijk * cell_size
    bhi = blo + cell_size
    for k in range(4):
        p = pts[tid, k]
        sure |= np.all((p >= blo) & (p <= bhi), axis=1)
    rest = np.flatnonzero(~sure)
    keep = sure
    for s in range(0, len(rest), 50_000):
        r = rest[s:s + 50_000]
        # the four face-normal axes first: a pair they separate is a sure miss
        lo_r, hi_r = blo[r], bhi[r]
        centre = (lo_r + hi_r) / 2
        half = (hi_r - lo_r) / 2
        q = pts[tid[r]] - centre[:, None, :]
        fs = FACE_SLOTS
        axes = np.cross(q[:, fs[:, 1]] - q[:, fs[:, 0]], q[:, fs[:, 2]] - q[:, fs[:, 0]])
        proj = np.einsum("pad,pvd->pav", axes, q)
        rad = np.einsum("pad,pd->pa", np.abs(axes), half)
        sc = np.linalg.norm(axes, axis=2) * eps
        miss = ((proj.min(axis=2) > rad + sc) | (proj.max(axis=2) < -rad - sc)).any(axis=1)
        # a box corner inside the closed tetrahedron: a sure hit
        on_face = proj[:, np.arange(4), fs[:, 0]]                    # (P,4)
        opposite = proj[:, np.arange(4), np.arange(4)] - on_face     # (P,4)
        corner = np.einsum("pad,cd,pd->pac", axes, _CORNERS, half)   # (P,4,8)
        inside = ((corner - on_face[:, :, None]) * opposite[:, :, None] >= 0).all(axis=1)
        hit = inside.any(axis=1) & ~miss
        keep[r[hit]] = True
        todo = r[~miss & ~hit]
        keep[todo] = tets_intersect_boxes(pts[tid[todo]], blo[todo], bhi[todo], eps)
    cells, tets = cand[keep], tid[keep]
    order = np.lexsort((tets, cells))
    return cells[order], tets[order]


def pinches_reference(tets):
    """``(edges, vertices)``: the boundary edges (sorted vertex pairs) not in
    exactly two boundary triangles, and the vertices whose boundary
    triangles, joined across the edges they share, form more than one group
    — counted face by face, edge by edge, vertex by vertex in plain Python."""
    from collections import Counter, defaultdict
    faces = Counter(tuple(sorted(f)) for t in np.asarray(tets).tolist()
                    for f in (t[1:], [t[0]] + t[2:], t[:2] + [t[3]], t[:3]))
    tris = [f for f, n in faces.items() if n == 1]
    edge_count = Counter(e for x, y, z in tris for e in ((x, y), (y, z), (x, z)))
    edges = sorted(e for e, n in edge_count.items() if n != 2)
    at = defaultdict(list)
    for tri in tris:
        for v in tri:
            at[v].append(tri)
    vertices = []
    for v, around in sorted(at.items()):
        group = list(range(len(around)))          # union-find over the triangles at v

        def root(i):
            while group[i] != i:
                i = group[i]
            return i
        for i in range(len(around)):
            for j in range(i):
                if len(set(around[i]) & set(around[j])) == 2:   # they share an edge (at v)
                    group[root(i)] = root(j)
        if len({root(i) for i in range(len(around))}) > 1:
            vertices.append(v)
    return edges, vertices


def interiors_overlap_depth(a, b):
    """The largest t such that some point is a convex combination of the
    vertices of tetrahedron ``a`` (4,3) with every weight >= t, and of
    ``b``'s likewise (a linear programme): > 0 exactly when their interiors
    overlap, <= 0 when they only touch or are apart."""
    from scipy.optimize import linprog
    # unknowns: 4 weights of a, 4 of b, t; maximise t
    c = np.zeros(9)
    c[8] = -1.0
    a_eq = np.zeros((5, 9))
    a_eq[:3, :4] = np.asarray(a, np.float64).T
    a_eq[:3, 4:8] = -np.asarray(b, np.float64).T
    a_eq[3, :4] = 1.0
    a_eq[4, 4:8] = 1.0
    b_eq = np.array([0, 0, 0, 1, 1], np.float64)
    a_ub = np.zeros((8, 9))
    a_ub[np.arange(8), np.arange(8)] = -1.0      # t - w <= 0
    a_ub[:, 8] = 1.0
    res = linprog(c, A_ub=a_ub, b_ub=np.zeros(8), A_eq=a_eq, b_eq=b_eq,
                  bounds=[(0, 1)] * 8 + [(-1, 1)], method="highs")
    return -res.fun if res.status == 0 else -1.0


def _box_pairs(p):
    """Every pair (i < j) of the finite tetrahedra (T,4,3) whose bounding
    boxes meet (closed boxes), as two arrays: sorted by the boxes' low x,
    tetrahedron k's candidates are the ones after it whose low x is at most
    its high x (the same pairs as testing all T(T-1)/2, without forming them)."""
    good = np.flatnonzero(np.isfinite(p).all(axis=(1, 2)))
    lo, hi = p[good].min(axis=1), p[good].max(axis=1)
    order = np.argsort(lo[:, 0], kind="stable")
    lo, hi = lo[order], hi[order]
    ends = np.searchsorted(lo[:, 0], hi[:, 0], side="right")
    counts = np.maximum(ends - np.arange(len(lo)) - 1, 0)
    a = np.repeat(np.arange(len(lo)), counts)
    b = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts) + a + 1
    keep = np.all((lo[a] <= hi[b]) & (lo[b] <= hi[a]), axis=1)
    a, b = good[order[a[keep]]], good[order[b[keep]]]
    return np.minimum(a, b), np.maximum(a, b)


def overlapping_pairs_reference(tet_points, tol):
    """Every pair (i < j) of tetrahedra (T,4,3) whose interiors overlap by
    more than ``tol`` along each separating axis (the 4 + 4 face normals,
    the 36 crosses of an edge of one with an edge of the other; a zero axis
    separates nothing), tried on every pair whose boxes meet: the
    exhaustive test, in plain numpy, axis by axis over all the pairs no
    earlier axis separated.
    Tetrahedra with a non-finite coordinate are left out."""
    p = np.asarray(tet_points, np.float64)
    i, j = _box_pairs(p)
    faces = np.array([[1, 2, 3], [0, 2, 3], [0, 1, 3], [0, 1, 2]])
    axes = [(0, f) for f in faces] + [(1, f) for f in faces] + \
        [(2, (ea, eb)) for ea in TET_EDGES for eb in TET_EDGES]
    for kind, which in axes:                # the pairs no axis so far separates
        a, b = p[i], p[j]                                 # (K,4,3)
        if kind < 2:
            t, f = (a, b)[kind], which
            ax = np.cross(t[:, f[1]] - t[:, f[0]], t[:, f[2]] - t[:, f[0]])
        else:
            ea, eb = which
            ax = np.cross(a[:, ea[1]] - a[:, ea[0]], b[:, eb[1]] - b[:, eb[0]])
        pa = np.einsum("kvc,kc->kv", a, ax)
        pb = np.einsum("kvc,kc->kv", b, ax)
        over = np.minimum(pa.max(1), pb.max(1)) - np.maximum(pa.min(1), pb.min(1))
        nn = np.einsum("kc,kc->k", ax, ax)
        separated = (nn > 0) & ((over <= 0) | (over * over <= tol * tol * nn))
        i, j = i[~separated], j[~separated]
    return {(int(x), int(y)) for x, y in zip(i, j)}
