"""Candidate pairs from bounding boxes (the broad phase of the exact tests).

Points are bucketed on a uniform grid and each box visits the buckets its
range covers, so the work follows the number of close pairs, never a dense
boxes x points matrix. Pairs come out in batches of bounded size.
"""

from __future__ import annotations

import numpy as np

from .grid import expand_cell_ranges, expand_counts, linear_cell

#: Candidate (box, point) pairs generated per batch by :func:`box_point_pairs`.
CANDIDATE_CHUNK = 2_000_000
#: Bucket grid cells per axis, at most.
MAX_BUCKETS = 256


def _bucket_grid(pts, lo, hi):
    """A bucket grid over ``pts``: ``(origin, cell (3,), nb (3,) buckets per
    axis)``, about two points a bucket, buckets not much smaller than a
    typical box."""
    plo = pts.min(axis=0)
    ext = pts.max(axis=0) - plo
    span_all = max(float(ext.max()), 1e-300)
    ext = np.maximum(ext, span_all * 1e-6)
    target = (float(np.prod(ext)) / max(len(pts) / 2.0, 1.0)) ** (1.0 / 3.0)
    box_size = np.median(np.max(hi - lo, axis=1))
    edge = max(target, 0.5 * float(box_size), span_all / MAX_BUCKETS)
    nb = np.clip(np.ceil(ext / edge), 1, MAX_BUCKETS).astype(np.int64)
    return plo, ext / nb, nb


def _batches(csum, chunk):
    """Consecutive ranges [a, b) of items whose running total ``csum``
    grows by at most ``chunk`` (at least one item each)."""
    a = 0
    while a < len(csum):
        base = csum[a - 1] if a else 0
        b = max(int(np.searchsorted(csum, base + chunk, side="right")), a + 1)
        yield a, b
        a = b


def box_point_pairs(lo, hi, points, *, chunk=CANDIDATE_CHUNK):
    """Every (box, point) pair with the point in the closed box, in batches.

    ``lo``/``hi`` (M,3), ``points`` (N,3). Yields ``(box_index,
    point_index)`` int64 arrays.
    """
    lo = np.asarray(lo, np.float64).reshape(-1, 3)
    hi = np.asarray(hi, np.float64).reshape(-1, 3)
    pts = np.asarray(points, np.float64).reshape(-1, 3)
    if len(lo) == 0 or len(pts) == 0:
        return
    plo, cell, nb = _bucket_grid(pts, lo, hi)
    pc = np.clip(np.floor((pts - plo) / cell), 0, nb - 1).astype(np.int64)
    pid = linear_cell(pc, nb)
    order = np.argsort(pid, kind="stable")
    counts = np.bincount(pid, minlength=int(np.prod(nb)))
    starts = np.cumsum(counts) - counts

    phi = pts.max(axis=0)
    live = np.nonzero(np.all(hi >= plo, axis=1) & np.all(lo <= phi, axis=1))[0]
    if len(live) == 0:
        return
    with np.errstate(invalid="ignore", over="ignore"):
        blo = np.clip(np.floor((lo[live] - plo) / cell), 0, nb - 1).astype(np.int64)
        bhi = np.clip(np.floor((hi[live] - plo) / cell), 0, nb - 1).astype(np.int64)
    # boxes in groups whose bucket count stays bounded, then (box, bucket)
    # pairs in groups whose point count does
    for g0, g1 in _batches(np.cumsum((bhi - blo + 1).prod(axis=1)), chunk):
        item, ijk = expand_cell_ranges(blo[g0:g1], bhi[g0:g1])
        bucket = linear_cell(ijk, nb)
        cnt = counts[bucket]
        keep = cnt > 0
        item, bucket, cnt = item[keep], bucket[keep], cnt[keep]
        for h0, h1 in _batches(np.cumsum(cnt), chunk):
            it2, off2 = expand_counts(cnt[h0:h1])
            box = live[g0 + item[h0:h1][it2]]
            pt = order[starts[bucket[h0:h1][it2]] + off2]
            inside = np.all((pts[pt] >= lo[box]) & (pts[pt] <= hi[box]), axis=1)
            if inside.any():
                yield box[inside], pt[inside]


def aabb_pairs(lo_a, hi_a, lo_b, hi_b, pad=0.0, *, chunk=CANDIDATE_CHUNK):
    """Every (i, j) with closed boxes a_i and b_j within ``pad`` of overlapping.

    The b boxes are grouped by size (factors of 2), so a few large ones do
    not widen the search for all; each group is searched by its box centres.
    Yields ``(i, j)`` int64 arrays in batches.
    """
    lo_a = np.asarray(lo_a, np.float64).reshape(-1, 3)
    hi_a = np.asarray(hi_a, np.float64).reshape(-1, 3)
    lo_b = np.asarray(lo_b, np.float64).reshape(-1, 3)
    hi_b = np.asarray(hi_b, np.float64).reshape(-1, 3)
    if len(lo_a) == 0 or len(lo_b) == 0:
        return
    half = (hi_b - lo_b) / 2
    centre = (hi_b + lo_b) / 2
    size = half.max(axis=1)
    smin = max(float(size[size > 0].min()) if np.any(size > 0) else 1.0, 1e-300)
    cls = np.floor(np.log2(np.maximum(size, smin) / smin)).astype(np.int64)
    for k in np.unique(cls):
        members = np.nonzero(cls == k)[0]
        reach = half[members].max(axis=0) + pad
        for i, jj in box_point_pairs(lo_a - reach, hi_a + reach, centre[members], chunk=chunk):
            j = members[jj]
            ok = np.all((lo_a[i] <= hi_b[j] + pad) & (hi_a[i] >= lo_b[j] - pad), axis=1)
            if ok.any():
                yield i[ok], j[ok]
