"""What a triangle soup gets wrong, counted: the build report's ``repairs``.

None of these changes the solid (the voxel solid reads only where the
triangles are, and winding only to tell enclosed air from a closed solid's
inside, in whole components), so each is "repaired" by being made harmless:

* ``welded_vertices``: vertices at the same position as another;
* ``degenerate``: triangles with two corners at one place, or no area;
* ``duplicates``: extra copies of a triangle (any order of its corners);
* ``open_edges``: edges of one triangle only (open shells, cracks);
* ``non_manifold_edges``: edges of three or more triangles;
* ``flipped_faces``: edges whose two triangles run them the same way (a
  face's winding against its neighbour's);
* ``t_junctions``: corners of an open edge lying inside another open edge.
"""

from __future__ import annotations

import numpy as np

#: Positions closer than this fraction of the soup's diagonal are one vertex.
WELD_REL = 1e-9
#: T-junction candidates examined at most (the count is a lower bound past it).
MAX_T_CANDIDATES = 5_000_000


def _unique_rows(a):
    """``(first, inverse)`` of the distinct rows of an int array: the index
    of each distinct row's first copy, and each row's distinct row (a sort
    of the columns, far faster than ``np.unique(axis=0)``)."""
    order = np.lexsort(a.T[::-1])
    s = a[order]
    new = np.ones(len(a), bool)
    new[1:] = (s[1:] != s[:-1]).any(axis=1)
    group = np.cumsum(new) - 1
    inv = np.empty(len(a), np.int64)
    inv[order] = group
    first = np.full(int(group[-1]) + 1 if len(a) else 0, len(a), np.int64)
    np.minimum.at(first, group, order)
    return first, inv


def _welded(verts, tris):
    """``(tris on welded vertices, vertices merged)``."""
    diag = float(np.linalg.norm(verts.max(axis=0) - verts.min(axis=0))) or 1.0
    q = np.round(verts / (WELD_REL * diag)).astype(np.int64)
    first, inv = _unique_rows(q)
    return first[inv][tris], int(len(verts) - len(first))


def _t_junctions(verts, edges, tol):
    """Corners of open edges strictly inside another open edge (within ``tol``)."""
    from scipy.spatial import cKDTree
    if not len(edges):
        return 0
    corners = np.unique(edges.ravel())
    tree = cKDTree(verts[corners])
    a, b = verts[edges[:, 0]], verts[edges[:, 1]]
    half = 0.5 * np.linalg.norm(b - a, axis=1)
    hits = tree.query_ball_point(0.5 * (a + b), half + tol, return_sorted=False)
    sizes = np.fromiter((len(h) for h in hits), np.int64, len(hits))
    if sizes.sum() > MAX_T_CANDIDATES:
        return -1
    e = np.repeat(np.arange(len(edges)), sizes)
    c = corners[np.concatenate([np.asarray(h, np.int64) for h in hits])] if len(e) else \
        np.zeros(0, np.int64)
    keep = (c != edges[e, 0]) & (c != edges[e, 1])
    e, c = e[keep], c[keep]
    d = b[e] - a[e]
    t = np.einsum("ij,ij->i", verts[c] - a[e], d) / np.maximum(np.einsum("ij,ij->i", d, d),
                                                               1e-300)
    foot = a[e] + t[:, None] * d
    on = (t > 1e-6) & (t < 1 - 1e-6) & (np.linalg.norm(verts[c] - foot, axis=1) <= tol)
    return len(np.unique(c[on]))


def soup_repairs(soup):
    """A dict of the counts in the module's docstring."""
    verts = np.asarray(soup.verts, np.float64)
    tris, welded = _welded(verts, np.asarray(soup.tris, np.int64))
    t = np.sort(tris, axis=1)
    same = (t[:, 0] == t[:, 1]) | (t[:, 1] == t[:, 2])
    p = verts[tris]
    area2 = np.linalg.norm(np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0]), axis=1)
    scale = np.maximum(np.abs(p).max(axis=(1, 2)), 1.0)
    degen = same | (area2 <= 1e-12 * scale ** 2)
    good = tris[~degen]
    first, _ = _unique_rows(np.sort(good, axis=1))
    dups = len(good) - len(first)
    good = good[np.sort(first)]
    directed = np.concatenate([good[:, [0, 1]], good[:, [1, 2]], good[:, [2, 0]]])
    und = np.sort(directed, axis=1)
    first_e, inv = _unique_rows(und)
    keys = und[first_e]
    counts = np.bincount(inv, minlength=len(keys))
    forward = (directed[:, 0] < directed[:, 1]).astype(np.int64)
    fw = np.bincount(inv, weights=forward, minlength=len(keys))
    two = counts == 2
    flipped = int((two & (fw != 1)).sum())
    open_edges = keys[counts == 1]
    diag = float(np.linalg.norm(verts.max(axis=0) - verts.min(axis=0))) or 1.0
    return {"welded_vertices": welded, "degenerate": int(degen.sum()), "duplicates": int(dups),
            "open_edges": len(open_edges), "non_manifold_edges": int((counts > 2).sum()),
            "flipped_faces": flipped,
            "t_junctions": _t_junctions(verts, open_edges, 1e-7 * diag)}
