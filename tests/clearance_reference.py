"""Slow, plain numpy distances that judge the clearance kernels: every
segment against every wall triangle that can come within the distance asked
about (a bounding-sphere prefilter, scipy's k-d tree of the triangles'
centroids, rules out only pairs that provably cannot), no BVH of regn's,
no compiled code of regn's.

The distance between a segment and a triangle is the least of: zero when
the segment crosses the triangle; each end point against the triangle;
each triangle corner against the segment; the segment against each
triangle edge. (Two disjoint convex polytopes have a closest pair made of a
vertex and a face, or of two edges.) A point against a triangle is the
distance to its plane when the foot falls inside, else the nearest edge.
Two segments: the interior solution when both parameters fall inside,
else the nearest end point against the other segment.
"""

import itertools

import numpy as np
from scipy.spatial import cKDTree

CHUNK = 400_000          # (segment, triangle) pairs per batch


def walls(mesh):
    """(B,3,3) the boundary triangles of a mesh."""
    bf = np.asarray(mesh.boundary_faces)
    return np.asarray(mesh.vertices)[np.asarray(mesh.face_vertices)[bf]]


def _dot(a, b):
    return np.einsum("...i,...i->...", a, b)


def point_segment(p, a, b):
    d = b - a
    dd = _dot(d, d)
    t = np.clip(_dot(p - a, d) / np.where(dd > 0, dd, 1.0), 0.0, 1.0)
    t = np.where(dd > 0, t, 0.0)
    return np.linalg.norm(p - (a + t[..., None] * d), axis=-1)


def point_triangle(p, t0, t1, t2):
    n = np.cross(t1 - t0, t2 - t0)
    nn = _dot(n, n)
    inside = ((_dot(np.cross(t1 - t0, p - t0), n) >= 0) & (_dot(np.cross(t2 - t1, p - t1), n) >= 0)
              & (_dot(np.cross(t0 - t2, p - t2), n) >= 0) & (nn > 0))
    plane = np.abs(_dot(p - t0, n)) / np.sqrt(np.where(nn > 0, nn, 1.0))
    edges = np.minimum(np.minimum(point_segment(p, t0, t1), point_segment(p, t1, t2)),
                       point_segment(p, t2, t0))
    return np.where(inside, plane, edges)


def segment_segment(a, b, c, d):
    u, v, w = b - a, d - c, a - c
    uu, uv, vv, uw, vw = _dot(u, u), _dot(u, v), _dot(v, v), _dot(u, w), _dot(v, w)
    den = uu * vv - uv * uv
    ok = den > 1e-12 * uu * vv
    s = (uv * vw - vv * uw) / np.where(ok, den, 1.0)
    t = (uu * vw - uv * uw) / np.where(ok, den, 1.0)
    interior = ok & (s > 0) & (s < 1) & (t > 0) & (t < 1)
    mid = np.linalg.norm((a + s[..., None] * u) - (c + t[..., None] * v), axis=-1)
    ends = np.minimum(np.minimum(point_segment(a, c, d), point_segment(b, c, d)),
                      np.minimum(point_segment(c, a, b), point_segment(d, a, b)))
    return np.where(interior, np.minimum(mid, ends), ends)


def segment_triangle(a, b, t0, t1, t2):
    n = np.cross(t1 - t0, t2 - t0)
    sa, sb = _dot(a - t0, n), _dot(b - t0, n)
    cross = (sa * sb <= 0) & (sa != sb)
    f = sa / np.where(cross, sa - sb, 1.0)
    p = a + f[..., None] * (b - a)
    on = (cross & (_dot(np.cross(t1 - t0, p - t0), n) >= 0)
          & (_dot(np.cross(t2 - t1, p - t1), n) >= 0) & (_dot(np.cross(t0 - t2, p - t2), n) >= 0))
    d = np.minimum(point_triangle(a, t0, t1, t2), point_triangle(b, t0, t1, t2))
    for c in (t0, t1, t2):
        d = np.minimum(d, point_segment(c, a, b))
    for c, e in ((t0, t1), (t1, t2), (t2, t0)):
        d = np.minimum(d, segment_segment(a, b, c, e))
    return np.where(on, 0.0, d)


def segments_clearance(a, b, tri, below=np.inf):
    """(N,) the distance from each segment a[i] b[i] to the nearest of the
    triangles tri (B,3,3), exact wherever it is below ``below`` (else
    inf). Every pair that can come within ``below`` is measured: a pair
    whose bounding spheres (:func:`_near_pairs`), then whose bounding
    boxes, are ``below`` or more apart cannot come closer."""
    a, b = np.asarray(a, float).reshape(-1, 3), np.asarray(b, float).reshape(-1, 3)
    out = np.full(len(a), np.inf)
    slo, shi = np.minimum(a, b), np.maximum(a, b)
    tlo, thi = tri.min(axis=1), tri.max(axis=1)
    for i, j in _pairs(a, b, tri, below):
        gap = np.maximum(0.0, np.maximum(tlo[j] - shi[i], slo[i] - thi[j]))
        keep = np.linalg.norm(gap, axis=1) < below
        i, j = i[keep], j[keep]
        d = segment_triangle(a[i], b[i], tri[j, 0], tri[j, 1], tri[j, 2])
        np.minimum.at(out, i, d)
    out[out >= below] = np.inf
    return out


def _pairs(a, b, tri, below):
    """Batches (i, j) of at most about CHUNK (segment, triangle) pairs:
    those of :func:`_near_pairs`, or every pair when ``below`` or a
    coordinate is not finite."""
    near = _near_pairs(a, b, tri, below)
    if near is not None:
        for s in range(0, len(near[0]), CHUNK):
            yield near[0][s:s + CHUNK], near[1][s:s + CHUNK]
        return
    step = max(1, CHUNK // max(len(tri), 1))
    for s in range(0, len(a), step):
        i = np.arange(s, min(s + step, len(a)))
        yield np.repeat(i, len(tri)), np.tile(np.arange(len(tri)), len(i))


def _near_pairs(a, b, tri, below):
    """(i, j) of every (segment, triangle) pair whose bounding spheres come
    within ``below`` (a superset of the pairs that do), or None when
    something is not finite. A point x of the segment within ``below`` of a
    point y of the triangle puts the segment's midpoint within half its
    length + below + the triangle's radius (its farthest corner from its
    centroid) of that centroid. The triangles are searched in groups of
    similar radius, each with its largest radius and a margin for rounding."""
    mid, half = (a + b) / 2, np.linalg.norm(b - a, axis=1) / 2
    centre = tri.mean(axis=1)
    radius = np.linalg.norm(tri - centre[:, None], axis=2).max(axis=1)
    if not (np.isfinite(below) and np.isfinite(mid).all() and np.isfinite(half).all()
            and np.isfinite(centre).all() and np.isfinite(radius).all()):
        return None
    n = len(a)
    group = np.floor(np.log2(np.maximum(radius, 1e-300))).astype(np.int64)
    pairs_i, pairs_j = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    for g in np.unique(group):
        members = np.flatnonzero(group == g)
        reach = (half + below + radius[members].max()) * (1 + 1e-6) + 1e-6
        found = cKDTree(centre[members]).query_ball_point(mid, reach, return_sorted=False)
        counts = np.fromiter(map(len, found), np.int64, n)
        pairs_i.append(np.repeat(np.arange(n), counts))
        pairs_j.append(members[np.fromiter(itertools.chain.from_iterable(found), np.int64,
                                           counts.sum())])
    return np.concatenate(pairs_i), np.concatenate(pairs_j)


def points_clearance(p, tri, below=np.inf):
    """(N,) each point's distance to the nearest triangle (see
    :func:`segments_clearance`)."""
    return segments_clearance(p, p, tri, below)


def polyline_clearance(points, tri, below=np.inf):
    """The least distance from any point of the polyline to a triangle."""
    points = np.asarray(points, float)
    return segments_clearance(points[:-1], points[1:], tri, below).min()
