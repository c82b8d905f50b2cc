"""Closest navigable point and distance to the nearest wall.

Walls are the boundary faces (``mesh.boundary_faces``, triangles from
``face_vertices``); triangles with a NaN/inf vertex are never chosen.

With numba (lazy import on first use, ``cache=True``) a compiled kernel
descends a bounding-volume hierarchy of the wall triangles
(:func:`_build_bvh`, built once in numpy, O(walls) memory): per point
depth-first, nearer child first, pruning every box whose squared distance
is no less than the best found, with an exact closest point on each leaf
triangle (:func:`_closest_tri`).

Without numba a vectorised search gives the same answers (distances within
rounding; on exact ties the row may differ), where a plain-Python descent
would be far slower. A cKDTree indexes *pieces*: each wall triangle is cut
into m x m similar sub-triangles (m from its size), so that no piece's
centroid is farther than ``r_piece`` from any of its points, however large
the triangle (a box wall can be one triangle 100 km across). A point's
answer is then proved in two steps:

1. the exact distance ``best`` to the parent triangles of its 8 nearest
   piece centroids is an upper bound;
2. a wall point closer than ``best`` lies in a piece whose centroid is
   within ``best + r_piece``, so the parents of the pieces in that ball are
   the only other candidates; they are solved exactly. The ball is skipped
   when the 8th centroid is already beyond it.

Either way work is chunked and proportional to the candidates found, never
to points x walls.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from . import as_points, scratch

NearestResult = namedtuple("NearestResult", ["points", "tets"])

#: points per batch of the wall search (its memory is ~1 kB a point)
CHUNK = 65536


#: the piece budget: this many per wall triangle, plus 2^18 (~20 MB in all)
PIECES_PER_WALL = 16
#: the pieces aimed at, as a fraction of the median wall triangle radius
PIECE_SIZE = 0.5


def _wall_tris(mesh) -> dict:
    """The wall rows (bf), their (B,3,3) triangles and owning tets (cached)."""
    s = scratch(mesh)
    if "wall_tris" not in s:
        bf = np.asarray(mesh.boundary_faces, dtype=np.int64)
        tri = np.asarray(mesh.vertices)[np.asarray(mesh.face_vertices)[bf]]   # (B,3,3)
        t, _ = mesh.face_owner
        s["wall_tris"] = dict(bf=bf, tri=tri, owner=np.asarray(t)[bf])
    return s["wall_tris"]


def _walls(mesh) -> dict:
    s = scratch(mesh)
    if "walls" in s:
        return s["walls"]
    from scipy.spatial import cKDTree
    wt = _wall_tris(mesh)
    bf, tri = wt["bf"], wt["tri"]
    w = dict(bf=bf, tri=tri, owner=wt["owner"], tree=None, parent=None, r_piece=0.0)
    if len(bf):
        cen = tri.mean(axis=1)
        with np.errstate(over="ignore", invalid="ignore"):      # (corrupted walls)
            rad = np.linalg.norm(tri - cen[:, None], axis=2).max(axis=1)
        rad = np.where(np.isfinite(rad), rad, 0.0)
        r_piece = float(np.median(rad)) * PIECE_SIZE or float(rad.max())   # (degenerate walls)
        budget = PIECES_PER_WALL * len(bf) + (1 << 18)
        while True:                          # coarser pieces until they fit the budget
            m = np.maximum(np.ceil(rad / max(r_piece, 1e-300)), 1.0)   # float: no overflow
            if float((m * m).sum()) <= budget or r_piece <= 0:
                break
            r_piece = max(r_piece * 1.5, float(rad.max()) / np.sqrt(budget))
        m = m.astype(np.int64)
        parent, pc = _pieces(tri, m)
        ok = np.isfinite(pc).all(axis=1)
        w.update(tree=cKDTree(pc[ok]), parent=parent[ok],
                 r_piece=float((rad / m).max()) * (1 + 1e-9))
    s["walls"] = w
    return w


def _pieces(tri, m):
    """Centroids of the m*m similar sub-triangles of each triangle (m[i] per
    triangle) and the triangle each belongs to. Each piece's radius is the
    parent's radius / m."""
    parents, cents = [], []
    for mi in np.unique(m):
        sel = np.flatnonzero(m == mi)
        # barycentric (a, b) of the piece centroids, in units of 1/mi:
        # upward pieces (i+1/3, j+1/3) for i+j <= mi-1, downward (i+2/3, j+2/3)
        # for i+j <= mi-2
        i, j = np.meshgrid(np.arange(mi), np.arange(mi), indexing="ij")
        up = (i + j) <= mi - 1
        dn = (i + j) <= mi - 2
        ab = np.concatenate([np.stack([i[up] + 1 / 3, j[up] + 1 / 3], 1),
                             np.stack([i[dn] + 2 / 3, j[dn] + 2 / 3], 1)]) / mi
        T = tri[sel]
        e1, e2 = T[:, 1] - T[:, 0], T[:, 2] - T[:, 0]
        c = T[:, None, 0] + ab[None, :, :1] * e1[:, None] + ab[None, :, 1:] * e2[:, None]
        cents.append(c.reshape(-1, 3))
        parents.append(np.repeat(sel, len(ab)))
    return np.concatenate(parents), np.concatenate(cents)


def closest_on_triangles(p, tri):
    """(K,3) points, (K,3,3) triangles -> (K,3) closest points (exact)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return _closest(p, tri)


def _closest(p, tri):
    P0, P1, P2 = tri[:, 0], tri[:, 1], tri[:, 2]
    e1, e2 = P1 - P0, P2 - P0
    r = p - P0
    d00, d01, d11 = (e1 * e1).sum(1), (e1 * e2).sum(1), (e2 * e2).sum(1)
    d20, d21 = (r * e1).sum(1), (r * e2).sum(1)
    den = d00 * d11 - d01 * d01
    with np.errstate(invalid="ignore", divide="ignore"):
        v = (d11 * d20 - d01 * d21) / den
        w = (d00 * d21 - d01 * d20) / den
    inside = (den > 0) & (v >= 0) & (w >= 0) & (v + w <= 1)
    best = np.where(inside[:, None], P0 + v[:, None] * e1 + w[:, None] * e2, np.nan)
    bestd = np.where(inside, np.linalg.norm(best - p, axis=1), np.inf)
    for A, B in ((P0, P1), (P1, P2), (P2, P0)):
        e = B - A
        ee = (e * e).sum(1)
        with np.errstate(invalid="ignore", divide="ignore"):
            t = np.clip(((p - A) * e).sum(1) / ee, 0, 1)
        t = np.where(ee > 0, t, 0)
        x = A + t[:, None] * e
        dx = np.linalg.norm(x - p, axis=1)
        m = dx < bestd
        best[m], bestd[m] = x[m], dx[m]
    return best


def _nearest_wall(mesh, pts):
    """(N,3) finite points -> (closest points, distance, boundary-face row):
    the compiled BVH kernel when numba is there, else the piece search."""
    if _kernels()["compiled"]:
        return _nearest_wall_bvh(mesh, pts)
    return _nearest_wall_pieces(mesh, pts)


def _nearest_wall_pieces(mesh, pts, k=8):
    """The numpy piece search of the module docstring (same outputs)."""
    w = _walls(mesh)
    n = len(pts)
    if w["tree"] is None or n == 0 or w["tree"].n == 0:
        return np.full((n, 3), np.nan), np.full(n, np.inf), np.full(n, -1)
    tree, parent, tri = w["tree"], w["parent"], w["tri"]
    k = min(k, tree.n)
    dk, ik = tree.query(pts, k=k)
    dk, ik = dk.reshape(n, k), np.minimum(ik.reshape(n, k), tree.n - 1)
    cand = parent[ik]                                        # (n,k) wall rows
    x = closest_on_triangles(np.repeat(pts, k, axis=0), tri[cand.ravel()]).reshape(n, k, 3)
    with np.errstate(over="ignore", invalid="ignore"):
        dist = np.linalg.norm(x - pts[:, None], axis=2)
    dist = np.where(np.isnan(dist), np.inf, dist)
    j = np.argmin(dist, axis=1)
    rows = np.arange(n)
    bx, bd, bi = x[rows, j], dist[rows, j], cand[rows, j]
    # step 2 of the module docstring, for points whose ball reaches past
    # their k-th centroid (with every piece among the k, nothing is left)
    radius = bd + w["r_piece"]
    unsure = np.flatnonzero(~(radius <= dk[:, -1])) if k < tree.n else np.zeros(0, np.int64)
    unsure = unsure[np.isfinite(radius[unsure])]
    B = len(tri)
    # in groups of similar radius: cKDTree takes one distance bound per call
    todo = unsure[np.argsort(radius[unsure], kind="stable")]
    kk = 32
    while len(todo):
        kk = min(kk, tree.n)
        again = []
        for c0 in range(0, len(todo), max(1, (1 << 16) // kk)):
            u = todo[c0:c0 + max(1, (1 << 16) // kk)]
            # the ball's pieces, as the kk nearest within the radius
            d2, i2 = tree.query(pts[u], k=kk, distance_upper_bound=float(radius[u].max()))
            d2, i2 = d2.reshape(len(u), kk), i2.reshape(len(u), kk)
            inball = d2 <= radius[u][:, None]
            full = inball[:, -1] & (kk < tree.n)     # the ball may hold more
            row, col = np.nonzero(inball & ~full[:, None])
            _improve(pts, tri, u, row, parent[i2[row, col]], B, bx, bd, bi)
            again.append(u[full])
        todo = np.concatenate(again)
        kk *= 4                                   # rare: far points see many pieces
    return bx, bd, bi


def _improve(pts, tri, u, row, wall, B, bx, bd, bi):
    """Solve the (point u[row], wall) pairs exactly (each pair once) and keep
    each point's best where it beats the current one."""
    if len(row) == 0:
        return
    pair = np.unique(row * B + wall)
    row, wall = pair // B, pair % B
    P = pts[u[row]]
    xc = closest_on_triangles(P, tri[wall])
    with np.errstate(over="ignore", invalid="ignore"):
        dc = np.linalg.norm(xc - P, axis=1)
    dc = np.where(np.isnan(dc), np.inf, dc)
    order = np.lexsort((dc, row))                 # by point, then distance
    first = order[np.r_[True, row[order][1:] != row[order][:-1]]]
    a = u[row[first]]
    better = dc[first] < bd[a]
    a, f = a[better], first[better]
    bd[a], bx[a], bi[a] = dc[f], xc[f], wall[f]


# ---------------------------------------------------------------- BVH kernel

#: triangles per BVH leaf: a leaf's triangles are solved one by one, so a
#: few per leaf trade box tests against triangle tests (8 measured best of 2-16)
BVH_LEAF = 8
#: the descent's stack: it holds at most depth + 1 entries (each popped node
#: pushes its two children), and a median split keeps depth <= log2(B) + 1
_STACK = 128
#: sin^2 of the angle at a vertex below which a triangle is solved as its
#: three edges (zero-area or so thin that the face formula loses its digits)
FLAT_SIN2 = 1e-14


def _build_bvh(tri, leaf=BVH_LEAF) -> dict | None:
    """A BVH over the finite triangles of (B,3,3) ``tri``, by median splits
    (on the longest axis of the centroids' extent), built level by level with
    numpy. Flat arrays, O(B) in all (None when no triangle is finite):

    - ``box`` (M,6) float64: node AABB (lo xyz, hi xyz), one 48-byte record
      per node so a box test reads one place;
    - ``node`` (M,2) int64: (first, count): count > 0 is a leaf holding
      triangles first .. first+count-1; count == 0 an inner node whose
      children are first and first+1 (siblings adjacent: one index suffices);
    - ``tri`` (K,9) float64: the triangles in leaf order (a, b, c), so a
      leaf's triangles are contiguous; ``tbox`` (K,6) each one's own AABB
      (a cheap test before the exact one); ``row`` (K,) the boundary-face row;
      ``flat`` (K,) uint8: 1 = solve on the edges (see :data:`FLAT_SIN2`).

    Node 0 is the root; every node's box holds its children's boxes and its
    triangles."""
    tri = np.asarray(tri, dtype=np.float64).reshape(-1, 3, 3)
    good = np.flatnonzero(np.isfinite(tri).all(axis=(1, 2)))   # NaN/inf: never chosen
    K = len(good)
    if K == 0:
        return None
    T = tri[good]
    cen = T[:, 0] / 3 + T[:, 1] / 3 + T[:, 2] / 3              # (no overflow near 1e308)
    order = np.arange(K)                       # leaf order, as positions into T
    levels = []                                # per level: (start, end, split?)
    s, e = np.zeros(1, np.int64), np.full(1, K, np.int64)
    while len(s):
        sp = (e - s) > leaf
        levels.append((s, e, sp))
        if not sp.any():
            break
        ss, ee = s[sp], e[sp]
        lens = ee - ss
        seg = np.repeat(np.arange(len(ss)), lens)
        first = np.cumsum(lens) - lens
        pos = np.arange(lens.sum()) - np.repeat(first, lens) + np.repeat(ss, lens)
        C = cen[order[pos]]
        with np.errstate(over="ignore", invalid="ignore"):
            ext = np.maximum.reduceat(C, first) - np.minimum.reduceat(C, first)
        axis = np.argmax(np.nan_to_num(ext, nan=0.0), axis=1)
        key = C[np.arange(len(C)), axis[seg]]
        order[pos] = order[pos][np.lexsort((key, seg))]       # sort within each node
        mid = (ss + ee) // 2
        s = np.column_stack([ss, mid]).ravel()
        e = np.column_stack([mid, ee]).ravel()
    if len(levels) + 1 > _STACK:
        raise RuntimeError("BVH deeper than its traversal stack")   # (B > 2^120)
    base = np.cumsum([0] + [len(lv[0]) for lv in levels])
    M = int(base[-1])
    node = np.zeros((M, 2), np.int64)
    for L, (s, e, sp) in enumerate(levels):
        ids = base[L] + np.arange(len(s))
        node[ids[~sp], 0] = s[~sp]
        node[ids[~sp], 1] = (e - s)[~sp]
        node[ids[sp], 0] = base[L + 1] + 2 * np.arange(int(sp.sum()))
    T = T[order]
    tlo, thi = T.min(axis=1), T.max(axis=1)
    box = np.empty((M, 6))
    leaves = np.flatnonzero(node[:, 1] > 0)
    leaves = leaves[np.argsort(node[leaves, 0])]      # they tile 0..K-1 in this order
    box[leaves, :3] = np.minimum.reduceat(tlo, node[leaves, 0])
    box[leaves, 3:] = np.maximum.reduceat(thi, node[leaves, 0])
    for L in range(len(levels) - 1, -1, -1):          # inner boxes, bottom up
        s, e, sp = levels[L]
        ids = base[L] + np.flatnonzero(sp)
        c = node[ids, 0]
        box[ids, :3] = np.minimum(box[c, :3], box[c + 1, :3])
        box[ids, 3:] = np.maximum(box[c, 3:], box[c + 1, 3:])
    e1, e2 = T[:, 1] - T[:, 0], T[:, 2] - T[:, 0]
    with np.errstate(over="ignore", invalid="ignore"):
        d00, d11, d01 = (e1 * e1).sum(1), (e2 * e2).sum(1), (e1 * e2).sum(1)
        flat = ~(d00 * d11 - d01 * d01 > FLAT_SIN2 * (d00 * d11))   # NaN (overflow): edges
    return dict(box=box, node=node, tri=np.ascontiguousarray(T.reshape(K, 9)),
                tbox=np.ascontiguousarray(np.hstack([tlo, thi])),
                row=good[order].astype(np.int64), flat=flat.astype(np.uint8),
                depth=len(levels))


def _wall_bvh(mesh):
    """The mesh's wall BVH (cached; None without finite walls)."""
    s = scratch(mesh)
    if "wall_bvh" not in s:
        s["wall_bvh"] = _build_bvh(_wall_tris(mesh)["tri"])
    return s["wall_bvh"]


def _seg(ax, ay, az, bx, by, bz, px, py, pz):
    """Closest point to p on segment ab (a when it has length 0)."""
    ex, ey, ez = bx - ax, by - ay, bz - az
    ee = ex * ex + ey * ey + ez * ez
    t = 0.0
    if ee > 0.0:
        t = ((px - ax) * ex + (py - ay) * ey + (pz - az) * ez) / ee
        if t < 0.0:
            t = 0.0
        elif t > 1.0:
            t = 1.0
        elif math.isnan(t):
            t = 0.0
    return ax + t * ex, ay + t * ey, az + t * ez


def _edges(ax, ay, az, bx, by, bz, cx, cy, cz, px, py, pz):
    """Closest point to p on the three edges of triangle abc."""
    qx, qy, qz = _seg(ax, ay, az, bx, by, bz, px, py, pz)
    best = (qx - px) ** 2 + (qy - py) ** 2 + (qz - pz) ** 2
    rx, ry, rz = _seg(bx, by, bz, cx, cy, cz, px, py, pz)
    d = (rx - px) ** 2 + (ry - py) ** 2 + (rz - pz) ** 2
    if d < best:
        qx, qy, qz, best = rx, ry, rz, d
    rx, ry, rz = _seg(cx, cy, cz, ax, ay, az, px, py, pz)
    d = (rx - px) ** 2 + (ry - py) ** 2 + (rz - pz) ** 2
    if d < best:
        qx, qy, qz = rx, ry, rz
    return qx, qy, qz


def _closest_tri(tri, k, flat, px, py, pz):
    """Closest point to p on triangle k of ``tri`` (K,9): the region-based
    test of Ericson, Real-Time Collision Detection 5.1.5. A flat triangle
    (``flat``), or one where a region's denominator rounds to 0 (a point
    very far from a tiny triangle), is solved as its three edges instead:
    never a division by zero, in Python or compiled."""
    ax, ay, az = tri[k, 0], tri[k, 1], tri[k, 2]
    bx, by, bz = tri[k, 3], tri[k, 4], tri[k, 5]
    cx, cy, cz = tri[k, 6], tri[k, 7], tri[k, 8]
    if flat:
        return _edges(ax, ay, az, bx, by, bz, cx, cy, cz, px, py, pz)
    abx, aby, abz = bx - ax, by - ay, bz - az
    acx, acy, acz = cx - ax, cy - ay, cz - az
    apx, apy, apz = px - ax, py - ay, pz - az
    d1 = abx * apx + aby * apy + abz * apz
    d2 = acx * apx + acy * apy + acz * apz
    if d1 <= 0.0 and d2 <= 0.0:
        return ax, ay, az                                  # vertex a
    bpx, bpy, bpz = px - bx, py - by, pz - bz
    d3 = abx * bpx + aby * bpy + abz * bpz
    d4 = acx * bpx + acy * bpy + acz * bpz
    if d3 >= 0.0 and d4 <= d3:
        return bx, by, bz                                  # vertex b
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        if not d1 - d3 > 0.0:
            return _edges(ax, ay, az, bx, by, bz, cx, cy, cz, px, py, pz)
        v = d1 / (d1 - d3)                                 # edge ab
        return ax + v * abx, ay + v * aby, az + v * abz
    cpx, cpy, cpz = px - cx, py - cy, pz - cz
    d5 = abx * cpx + aby * cpy + abz * cpz
    d6 = acx * cpx + acy * cpy + acz * cpz
    if d6 >= 0.0 and d5 <= d6:
        return cx, cy, cz                                  # vertex c
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        if not d2 - d6 > 0.0:
            return _edges(ax, ay, az, bx, by, bz, cx, cy, cz, px, py, pz)
        w = d2 / (d2 - d6)                                 # edge ac
        return ax + w * acx, ay + w * acy, az + w * acz
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and (d4 - d3) >= 0.0 and (d5 - d6) >= 0.0:
        if not (d4 - d3) + (d5 - d6) > 0.0:
            return _edges(ax, ay, az, bx, by, bz, cx, cy, cz, px, py, pz)
        w = (d4 - d3) / ((d4 - d3) + (d5 - d6))            # edge bc
        return bx + w * (cx - bx), by + w * (cy - by), bz + w * (cz - bz)
    s = va + vb + vc
    if not s > 0.0:                                        # (> 0 unless rounded away)
        return _edges(ax, ay, az, bx, by, bz, cx, cy, cz, px, py, pz)
    den = 1.0 / s                                          # inside the face
    v = vb * den
    w = vc * den
    return ax + abx * v + acx * w, ay + aby * v + acy * w, az + abz * v + acz * w


def _box_d2(box, k, px, py, pz):
    """Squared distance from p to node k's box (0 inside); branch-free
    (max, not if: which side p lies on is unpredictable)."""
    tx = max(box[k, 0] - px, px - box[k, 3], 0.0)
    ty = max(box[k, 1] - py, py - box[k, 4], 0.0)
    tz = max(box[k, 2] - pz, pz - box[k, 5], 0.0)
    return tx * tx + ty * ty + tz * tz


def _bvh_nearest(box, node, tri, tbox, row, flat, pts, out_x, out_d, out_i):
    """For each point: the closest point on the BVH's triangles, its distance
    and the triangle's row (NaN, inf, -1 when every squared distance
    overflows, or NaN geometry). Depth-first, nearer child first; a node
    whose box is no nearer than the best so far is skipped, so the answer is
    exact. Strict '<' keeps the first triangle found on exact ties, and a NaN
    distance never wins."""
    stack = np.empty(_STACK, dtype=np.int64)
    stack_d = np.empty(_STACK, dtype=np.float64)
    for i in range(pts.shape[0]):
        px, py, pz = pts[i, 0], pts[i, 1], pts[i, 2]
        best = math.inf
        bk = -1
        bx = by = bz = math.nan
        n = 0
        d = _box_d2(box, 0, px, py, pz)
        if d < best:
            stack[0] = 0
            stack_d[0] = d
            n = 1
        while n > 0:
            n -= 1
            if not stack_d[n] < best:
                continue
            k = stack[n]
            first = node[k, 0]
            cnt = node[k, 1]
            if cnt > 0:
                for t in range(first, first + cnt):
                    if not _box_d2(tbox, t, px, py, pz) < best:
                        continue               # the triangle's own box: cheaper
                    qx, qy, qz = _closest_tri(tri, t, flat[t], px, py, pz)
                    dx, dy, dz = qx - px, qy - py, qz - pz
                    d = dx * dx + dy * dy + dz * dz
                    if d < best:
                        best = d
                        bk = t
                        bx, by, bz = qx, qy, qz
            else:
                dl = _box_d2(box, first, px, py, pz)
                dr = _box_d2(box, first + 1, px, py, pz)
                near, far, dn, df = first, first + 1, dl, dr
                if dr < dl:
                    near, far, dn, df = first + 1, first, dr, dl
                if df < best:                      # pushed first, popped last
                    stack[n] = far
                    stack_d[n] = df
                    n += 1
                if dn < best:
                    stack[n] = near
                    stack_d[n] = dn
                    n += 1
        out_x[i, 0] = bx
        out_x[i, 1] = by
        out_x[i, 2] = bz
        if bk >= 0:
            out_d[i] = math.sqrt(best)
            out_i[i] = row[bk]
        else:
            out_d[i] = math.inf
            out_i[i] = -1


_KERNELS = {}


def _kernels():
    """{'nearest': compiled kernel, 'compiled': True} when numba imports,
    else {'nearest': the plain function, 'compiled': False} (then
    :func:`_nearest_wall` takes the numpy piece search instead)."""
    if not _KERNELS:
        try:
            import numba
            jit = numba.njit(cache=True, nogil=True)
            g = globals()
            # helpers compiled first and rebound, so the kernel compiled
            # after them calls the compiled versions
            for name in ("_seg", "_edges", "_closest_tri", "_box_d2"):
                g[name] = jit(g[name])
            _KERNELS.update(nearest=jit(_bvh_nearest), compiled=True)
        except Exception:          # numba missing or broken: the numpy path
            _KERNELS.update(nearest=_bvh_nearest, compiled=False)
    return _KERNELS


def _nearest_wall_bvh(mesh, pts, kernel=None):
    """:func:`_nearest_wall` by the BVH (``kernel``: the compiled one by
    default; the tests pass the plain function)."""
    n = len(pts)
    bx, bd, bi = np.full((n, 3), np.nan), np.full(n, np.inf), np.full(n, -1, np.int64)
    b = _wall_bvh(mesh)
    if b is None or n == 0:
        return bx, bd, bi
    k = kernel or _kernels()["nearest"]
    k(b["box"], b["node"], b["tri"], b["tbox"], b["row"], b["flat"],
      np.ascontiguousarray(pts, dtype=np.float64), bx, bd, bi)
    return bx, bd, bi


def nearest(mesh, points) -> NearestResult:
    """Points inside stay (with their tet); others move to the closest point of
    the nearest boundary triangle (tet = the tetrahedron that face bounds,
    which holds the moved point; ``locate`` of that point may name another
    tetrahedron sharing the face's edge or vertex, by its tie rule). NaN/inf
    points, and points so far away that distances overflow (|x| ~ 1e154+),
    -> NaN point, tet -1. Outside points are solved ``CHUNK`` at a time."""
    from .locate import locate
    pts = as_points(points)
    tets = locate(mesh, pts)
    out = pts.copy()
    fin = np.all(np.isfinite(pts), axis=1)
    out[~fin] = np.nan
    todo = np.flatnonzero((tets < 0) & fin)
    owner = _wall_tris(mesh)["owner"] if len(todo) else None
    for c0 in range(0, len(todo), CHUNK):
        k = todo[c0:c0 + CHUNK]
        bx, bd, bi = _nearest_wall(mesh, pts[k])
        ok = (bi >= 0) & np.isfinite(bd)      # overflowing distances: no answer
        bx[~ok] = np.nan
        out[k] = bx
        tets[k[~ok]] = -1
        tets[k[ok]] = owner[bi[ok]]
    return NearestResult(out, tets)


def distance_to_wall(mesh, points) -> np.ndarray:
    """(N,) exact distance to the nearest boundary triangle (NaN for NaN/inf)."""
    pts = as_points(points)
    out = np.full(len(pts), np.nan)
    fin = np.flatnonzero(np.all(np.isfinite(pts), axis=1))
    for c0 in range(0, len(fin), CHUNK):
        k = fin[c0:c0 + CHUNK]
        out[k] = _nearest_wall(mesh, pts[k])[1]
    return out
