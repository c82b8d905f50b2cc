"""Compiled kernels of :mod:`regn.geometry.overlap` (imported only on first use):
boundary faces near one another (see :mod:`regn.geometry.overlap` for why
they are the pairs to test). :func:`face_cells` and :func:`touching_faces`
find the boundary faces near one another (sharing no certified vertex, from
:mod:`regn.geometry._star_kernels`), :func:`patches` joins the others, and
:func:`near_faces` tests the tetrahedra crossing a boundary face's plane
near it (found in a :func:`box_tree`). Every loop counts its work against a
budget and stops when it runs out (the answer is then undecided).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .._jit import kernel
from ._face_listing_kernels import PAIR_WORK, record_pair
from ._tet_pair_kernels import TET_FACES, interval_along, face_normal, pair_overlaps

#: Children per node of the box trees.
BRANCH = 4


#: Cells a side of the grid that pairs boundary faces, at most, and their
#: entries per face, on average at most; the cells' edge, in units of the
#: edge of a cell that would hold one face (the fastest on the disc-sized
#: map of benchmarks/bench_format.py).
MAX_CELLS = 64.0


MAX_ENTRIES = 16.0


CELL_EDGE = 1.6


class Tree(NamedTuple):
    """Boxes in a tree: level 0 holds them in Morton order of their centres,
    each node of level l + 1 bounds :data:`BRANCH` consecutive nodes of
    level l; the last level is the root."""
    item: np.ndarray         # (n,) the box of each level-0 node
    lo: np.ndarray           # (M,3) node boxes, level by level
    hi: np.ndarray           # (M,3)
    level_start: np.ndarray  # (L+1,) level l's nodes are level_start[l]:level_start[l + 1]


@kernel(borrows=True)
def _spread(x):
    """The 10 low bits of x, two zero bits between each (for a Morton code)."""
    x &= 0x3FF
    x = (x | (x << 16)) & 0x030000FF
    x = (x | (x << 8)) & 0x0300F00F
    x = (x | (x << 4)) & 0x030C30C3
    return (x | (x << 2)) & 0x09249249


@kernel
def _morton_order(lo, hi, idx):
    """``idx`` sorted by the Morton code of the boxes' centres (30 bits, by
    three passes of a radix sort)."""
    n = idx.shape[0]
    c_lo = np.full(3, math.inf)
    c_hi = np.full(3, -math.inf)
    for i in range(n):
        for e in range(3):
            x = 0.5 * (lo[idx[i], e] + hi[idx[i], e])
            c_lo[e] = min(c_lo[e], x)
            c_hi[e] = max(c_hi[e], x)
    key = np.zeros(n, np.int64)
    for i in range(n):
        for e in range(3):
            x = 0.5 * (lo[idx[i], e] + hi[idx[i], e])
            ext = c_hi[e] - c_lo[e]
            q = int((x - c_lo[e]) / ext * 1023.0) if ext > 0.0 else 0
            key[i] |= _spread(min(max(q, 0), 1023)) << e
    order = idx.copy()
    tmp = np.empty(n, np.int64)
    key_tmp = np.empty(n, np.int64)
    for shift in range(0, 30, 10):
        start = np.zeros(1025, np.int64)
        for i in range(n):
            start[((key[i] >> shift) & 1023) + 1] += 1
        for b in range(1024):
            start[b + 1] += start[b]
        for i in range(n):
            b = (key[i] >> shift) & 1023
            tmp[start[b]], key_tmp[start[b]] = order[i], key[i]
            start[b] += 1
        order, tmp = tmp, order
        key, key_tmp = key_tmp, key
    return order


@kernel
def box_tree(lo, hi, use):
    """The :class:`Tree` of the boxes ``lo``..``hi`` (N,3) with ``use``."""
    order = _morton_order(lo, hi, np.flatnonzero(use))
    n = order.shape[0]
    sizes = [max(n, 1)]
    while sizes[-1] > 1:
        sizes.append((sizes[-1] + BRANCH - 1) // BRANCH)
    level_start = np.zeros(len(sizes) + 1, np.int64)
    for lv in range(len(sizes)):
        level_start[lv + 1] = level_start[lv] + sizes[lv]
    t_lo = np.full((level_start[-1], 3), math.inf)
    t_hi = np.full((level_start[-1], 3), -math.inf)
    for i in range(n):
        for e in range(3):
            t_lo[i, e], t_hi[i, e] = lo[order[i], e], hi[order[i], e]
    for lv in range(1, len(sizes)):
        for i in range(sizes[lv]):
            node = level_start[lv] + i
            for c in range(level_start[lv - 1] + i * BRANCH,
                           min(level_start[lv - 1] + (i + 1) * BRANCH, level_start[lv])):
                for e in range(3):
                    t_lo[node, e] = min(t_lo[node, e], t_lo[c, e])
                    t_hi[node, e] = max(t_hi[node, e], t_hi[c, e])
    return Tree(order, t_lo, t_hi, level_start)


@kernel(borrows=True)
def _node_hit(tree, node, q_lo, q_hi, plane):
    """Does node's box meet the query box, and (when ``plane[3]`` is finite)
    reach both below ``plane[3]`` and to it or above along ``plane[:3]``?"""
    for e in range(3):
        if tree.hi[node, e] < q_lo[e] or tree.lo[node, e] > q_hi[e]:
            return False
    if not math.isfinite(plane[3]):
        return True
    mid = half = 0.0
    for e in range(3):
        mid += plane[e] * 0.5 * (tree.lo[node, e] + tree.hi[node, e])
        half += abs(plane[e]) * 0.5 * (tree.hi[node, e] - tree.lo[node, e])
    return mid - half < plane[3] and mid + half >= plane[3]


@kernel(borrows=True)
def _tree_hits(tree, q_lo, q_hi, plane, stack, hits):
    """``(n, work)``: the items of the level-0 nodes passing
    :func:`_node_hit` into ``hits[:n]``, and the node tests made."""
    top = tree.level_start.shape[0] - 2
    stack[0] = top << 40
    depth = 1
    n = work = 0
    while depth:
        depth -= 1
        level, i = stack[depth] >> 40, stack[depth] & ((1 << 40) - 1)
        below = tree.level_start[level - 1] if level else 0
        end = min((i + 1) * BRANCH, tree.level_start[level] - below) if level else 1
        for c in range(i * BRANCH if level else 0, end):
            node = below + c if level else i
            work += 1
            if not _node_hit(tree, node, q_lo, q_hi, plane):
                continue
            if level > 1:
                stack[depth] = ((level - 1) << 40) | c
                depth += 1
            else:
                hits[n] = tree.item[node]
                n += 1
    return n, work


@kernel
def face_boxes(pts, faces, tol):
    """(F,3) lo, hi of the face slots ``faces``, widened by ``tol``."""
    lo = np.empty((faces.shape[0], 3))
    hi = np.empty((faces.shape[0], 3))
    for f in range(faces.shape[0]):
        t, k = faces[f] // 4, faces[f] % 4
        for e in range(3):
            a, b, c = pts[t, TET_FACES[k, 0], e], pts[t, TET_FACES[k, 1], e], pts[t, TET_FACES[k, 2], e]
            lo[f, e] = min(a, min(b, c)) - tol
            hi[f, e] = max(a, max(b, c)) + tol
    return lo, hi


@kernel(borrows=True)
def _tri_interval(pts, r, a0, a1, a2):
    """min, max of face slot r's three vertices along the axis ``a``."""
    t, k = r // 4, r % 4
    mn = math.inf
    mx = -math.inf
    for s in range(3):
        v = TET_FACES[k, s]
        p = a0 * pts[t, v, 0] + a1 * pts[t, v, 1] + a2 * pts[t, v, 2]
        mn = min(mn, p)
        mx = max(mx, p)
    return mn, mx


@kernel(borrows=True)
def _tri_edge(pts, r, s):
    """Edge s of face slot r (from its vertex s to the next), as a vector."""
    t, k = r // 4, r % 4
    a, b = TET_FACES[k, s], TET_FACES[k, (s + 1) % 3]
    return pts[t, b, 0] - pts[t, a, 0], pts[t, b, 1] - pts[t, a, 1], pts[t, b, 2] - pts[t, a, 2]


@kernel(borrows=True)
def _gap_along(pts, r, q, a0, a1, a2, tol2):
    """Are faces r and q more than ``tol`` apart along the axis ``a``?"""
    nn = a0 * a0 + a1 * a1 + a2 * a2
    if not nn > 0.0:
        return False
    mn_r, mx_r = _tri_interval(pts, r, a0, a1, a2)
    mn_q, mx_q = _tri_interval(pts, q, a0, a1, a2)
    gap = max(mn_q - mx_r, mn_r - mx_q)
    return gap > 0.0 and gap * gap > tol2 * nn


@kernel(borrows=True)
def _faces_apart(pts, r, q, tol2):
    """Are the triangles of face slots r and q more than ``tol`` apart along
    one of their separating axes (each normal, each normal crossed with its
    own edges, each edge of one crossed with each of the other)?"""
    for f in range(2):
        x = r if f == 0 else q
        n0, n1, n2, _, _ = face_normal(pts, x // 4, x % 4)
        if _gap_along(pts, r, q, n0, n1, n2, tol2):
            return True
        for s in range(3):
            e0, e1, e2 = _tri_edge(pts, x, s)
            if _gap_along(pts, r, q, n1 * e2 - n2 * e1, n2 * e0 - n0 * e2, n0 * e1 - n1 * e0,
                          tol2):
                return True
    for s in range(3):
        u0, u1, u2 = _tri_edge(pts, r, s)
        for m in range(3):
            w0, w1, w2 = _tri_edge(pts, q, m)
            if _gap_along(pts, r, q, u1 * w2 - u2 * w1, u2 * w0 - u0 * w2, u0 * w1 - u1 * w0,
                          tol2):
                return True
    return False


@kernel(borrows=True)
def _shares_certified(tets, i, j, certified):
    """Do tetrahedra i and j share a certified vertex?"""
    for si in range(4):
        for sj in range(4):
            if tets[i, si] == tets[j, sj] and certified[tets[i, si]]:
                return True
    return False


@kernel
def face_keys(tets, faces, certified):
    """(F,3) the vertices of each face, an uncertified one as ``-1 - (its
    place)`` (equal to no other): two faces share a certified vertex
    exactly when a key of one equals a key of the other."""
    keys = np.empty((faces.shape[0], 3), np.int64)
    for f in range(faces.shape[0]):
        t, k = faces[f] // 4, faces[f] % 4
        for s in range(3):
            v = tets[t, TET_FACES[k, s]]
            keys[f, s] = v if certified[v] else -1 - 3 * f - s
    return keys


@kernel(borrows=True)
def _cells(lo, hi, i, origin, size, dims):
    """Box i's first and last cell on each axis (six ints)."""
    return (_cell(lo[i, 0], origin[0], size[0], dims[0]), _cell(lo[i, 1], origin[1], size[1], dims[1]),
            _cell(lo[i, 2], origin[2], size[2], dims[2]), _cell(hi[i, 0], origin[0], size[0], dims[0]),
            _cell(hi[i, 1], origin[1], size[1], dims[1]), _cell(hi[i, 2], origin[2], size[2], dims[2]))


@kernel(borrows=True)
def _cell(x, origin, size, n):
    return int(min(max(math.floor((x - origin) / size), 0.0), n - 1.0))


@kernel
def _grid(lo, hi):
    """``(origin, size, dims)`` of a uniform grid over the boxes, cells
    :data:`CELL_EDGE` times the size that would hold one box each, at most
    :data:`MAX_CELLS` a side,
    coarser while the boxes would make more than :data:`MAX_ENTRIES` entries
    each on average."""
    n = lo.shape[0]
    origin = np.full(3, math.inf)
    top = np.full(3, -math.inf)
    for i in range(n):
        for e in range(3):
            origin[e] = min(origin[e], lo[i, e])
            top[e] = max(top[e], hi[i, e])
    ext = np.maximum(top - origin, 1e-300)
    edge = max(CELL_EDGE * (ext[0] * ext[1] * ext[2] / max(n, 1)) ** (1.0 / 3.0),
               ext.max() / MAX_CELLS)
    dims = np.minimum(np.ceil(ext / edge), MAX_CELLS)
    while dims.max() > 1.0:
        size = ext / dims
        entries = 0.0
        for i in range(n):
            c = _cells(lo, hi, i, origin, size, dims)
            entries += (c[3] - c[0] + 1.0) * (c[4] - c[1] + 1.0) * (c[5] - c[2] + 1.0)
        if entries <= MAX_ENTRIES * n:
            break
        dims = np.maximum(np.floor(dims / 2.0), 1.0)
    return origin, ext / dims, dims


@kernel
def _buckets(lo, hi, origin, size, dims):
    """``(start, entry)``: each box entered in every grid cell it meets,
    grouped by cell and within a cell by the axes the box starts on there
    (bits 1, 2, 4 for x, y, z): group g of cell b holds
    ``entry[start[8 b + g]:start[8 b + g + 1]]``."""
    nx, ny = int(dims[0]), int(dims[1])
    start = np.zeros(8 * nx * ny * int(dims[2]) + 1, np.int32)
    entry = np.empty(0, np.int32)
    fill = start[:-1].copy()
    for rnd in range(2):
        if rnd:
            for b in range(start.shape[0] - 1):
                start[b + 1] += start[b]
            entry = np.empty(start[-1], np.int32)
            fill = start[:-1].copy()
        for i in range(lo.shape[0]):
            x0, y0, z0, x1, y1, z1 = _cells(lo, hi, i, origin, size, dims)
            for z in range(z0, z1 + 1):
                for y in range(y0, y1 + 1):
                    for x in range(x0, x1 + 1):
                        g = 8 * ((z * ny + y) * nx + x) + ((x == x0) | ((y == y0) << 1)
                                                           | ((z == z0) << 2))
                        if rnd:
                            entry[fill[g]] = i
                            fill[g] += 1
                        else:
                            start[g + 1] += 1
    return start, entry


@kernel
def face_cells(lo, hi):
    """The boxes ``lo``..``hi`` (F,3) in the cells of a grid (see
    :func:`_grid`, :func:`_buckets`): ``(start, entry)``."""
    return _buckets(lo, hi, *_grid(lo, hi))


@kernel(borrows=True)
def _meeting(col, ids, p, q0, q1, meet):
    """``meet[q]`` for q in ``q0..q1-1``: do boxes p and q meet, sharing no
    key? (Branch-free, so that it runs as vector instructions: whether two
    boxes meet is a coin toss here.)"""
    x0, y0, z0, x1, y1, z1 = col[0, p], col[1, p], col[2, p], col[3, p], col[4, p], col[5, p]
    a, b, c = ids[0, p], ids[1, p], ids[2, p]
    for q in range(q0, q1):
        meet[q] = ((col[3, q] >= x0) & (col[0, q] <= x1) & (col[4, q] >= y0) & (col[1, q] <= y1)
                   & (col[5, q] >= z0) & (col[2, q] <= z1)
                   & (ids[0, q] != a) & (ids[0, q] != b) & (ids[0, q] != c)
                   & (ids[1, q] != a) & (ids[1, q] != b) & (ids[1, q] != c)
                   & (ids[2, q] != a) & (ids[2, q] != b) & (ids[2, q] != c))


@kernel
def touching_faces(pts, tets, faces, lo, hi, keys, start, entry, c0, c1, near, tol, budget):
    """Mark in ``near`` the boundary faces (slots ``faces``, boxes
    ``lo``..``hi`` widened by ``tol``, in the grid cells ``start``,
    ``entry`` of :func:`face_cells`; cells ``c0..c1-1`` here) within
    ``tol`` of another that shares no certified vertex with it (``keys``:
    :func:`face_keys`). Such a pair may touch or cross; a pair sharing one
    belongs to one fan, graph over a plane or bounded by a simple loop, and
    meets only at their common edge or vertex. Each pair of boxes is looked
    at once, in the cell holding the low corner of their intersection: where,
    on each axis, one of them starts. Returns the work spent."""
    tol2 = tol * tol
    most = 0
    for b in range(8 * c0, 8 * c1, 8):
        most = max(most, start[b + 8] - start[b])
    # a cell's boxes and keys, column by column, and which of them meet a box
    col = np.empty((6, most))
    ids = np.empty((3, most), np.int64)
    meet = np.empty(most, np.bool_)
    work = 0
    for b in range(8 * c0, 8 * c1, 8):
        if work > budget:
            break
        for p in range(start[b], start[b + 8]):
            for e in range(3):
                col[e, p - start[b]] = lo[entry[p], e]
                col[e + 3, p - start[b]] = hi[entry[p], e]
                ids[e, p - start[b]] = keys[entry[p], e]
        for gp in range(8):
            for p in range(start[b + gp] - start[b], start[b + gp + 1] - start[b]):
                if work > budget:
                    break
                for gq in range(gp, 8):
                    if (gp | gq) == 7:
                        q0 = p + 1 if gq == gp else start[b + gq] - start[b]
                        q1 = start[b + gq + 1] - start[b]
                        work += max(q1 - q0, 0)
                        _meeting(col, ids, p, q0, q1, meet)
                        for q in range(q0, q1):
                            if meet[q]:
                                work += PAIR_WORK
                                f, g = entry[start[b] + p], entry[start[b] + q]
                                if not _faces_apart(pts, faces[f], faces[g], tol2):
                                    near[f] = near[g] = True
    return work


@kernel(borrows=True)
def _root(parent, x):
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


@kernel
def patches(n_faces, near, joins):
    """(F,) the patch of each boundary face, as the smallest face index in
    it: faces ``joins`` names as consecutive around a certified vertex are
    joined when neither is ``near`` another."""
    parent = np.arange(n_faces)
    for j in range(joins.shape[0]):
        a, b = joins[j, 0], joins[j, 1]
        if not near[a] and not near[b]:
            ra, rb = _root(parent, a), _root(parent, b)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
    for f in range(n_faces):
        parent[f] = _root(parent, f)
    return parent


@kernel
def near_faces(pts, tets, tree, faces, which, at_centroid, certified, tol, budget, out):
    """``(found, hit, tested, work)``: for each boundary face slot
    ``faces[i]`` (4 t + k), i in ``which``, the solid tetrahedra s whose
    boxes meet the face's box (with ``at_centroid``, hold its centroid),
    that reach more than ``tol`` into t's side of its plane and come within
    ``tol`` of it (only such a tetrahedron can hold points just inside the
    face): the pairs overlapping by more than ``tol`` (a pair sharing a
    vertex whose tetrahedra are ``certified`` disjoint needs no test); which of the faces found one; how many candidates there were;
    the work spent (past ``budget`` it stops). The first ``len(out)`` pairs
    found go to ``out``."""
    tol2 = tol * tol
    stack = np.empty(BRANCH * tree.level_start.shape[0], np.int64)
    hits = np.empty(max(tree.item.shape[0], 1), np.int64)
    q_lo = np.empty(3)
    q_hi = np.empty(3)
    plane = np.empty(4)
    hit = np.zeros(which.shape[0], np.bool_)
    found = tested = work = 0
    for x in range(which.shape[0]):
        i = which[x]
        if work > budget:
            break
        t, k = faces[i] // 4, faces[i] % 4
        plane[0], plane[1], plane[2], on, _ = face_normal(pts, t, k)
        plane[3] = on - tol * math.sqrt(plane[0] ** 2 + plane[1] ** 2 + plane[2] ** 2)
        for e in range(3):
            a, b, c = pts[t, TET_FACES[k, 0], e], pts[t, TET_FACES[k, 1], e], pts[t, TET_FACES[k, 2], e]
            q_lo[e] = (a + b + c) / 3.0 - tol if at_centroid else min(a, min(b, c)) - tol
            q_hi[e] = (a + b + c) / 3.0 + tol if at_centroid else max(a, max(b, c)) + tol
        n, w = _tree_hits(tree, q_lo, q_hi, plane, stack, hits)
        work += w
        for h in range(n):
            s = hits[h]
            mn, mx = interval_along(pts, s, plane[0], plane[1], plane[2])
            if s == t or not (mn < plane[3] <= mx):
                continue
            tested += 1
            if _shares_certified(tets, t, s, certified):
                continue
            work += PAIR_WORK
            if pair_overlaps(pts, tets, t, s, tol2):
                found = record_pair(out, found, t, s)
                hit[x] = True
    return found, hit, tested, work

