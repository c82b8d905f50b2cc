"""Tetrahedra whose interiors overlap.

Tetrahedra of a mesh may share faces, edges and vertices, and may touch;
their interiors must not overlap. :func:`overlapping_tets` decides it
exactly (separating axes, with a tolerance ``tol`` for float32 rounding:
overlaps up to ``tol`` deep count as touching) in the compiled kernels of
:mod:`regn.geometry._tet_pair_kernels` (the exact pair test),
:mod:`regn.geometry._face_listing_kernels`,
:mod:`regn.geometry._face_proximity_kernels` and :mod:`regn.geometry._star_kernels`,
testing few pairs:

* **Solid tetrahedra only.** A tetrahedron at most ``tol`` thick along one
  of its own face normals (a flat one, or one with a non-finite coordinate)
  overlaps nothing by more than ``tol`` along that axis: it is left out.
* **Where an overlap shows.** Faces are matched by their vertex triples.
  Count how many tetrahedra hold each point, ``w(x)``. Along a path ``w``
  changes only where the path crosses a face: across a face two tetrahedra
  list from opposite sides it is unchanged (out of one, into the other);
  across a face one tetrahedron lists (a boundary face) it changes by one.
  So the edge of a region where ``w >= 2`` is made of faces listed from one
  side or more than twice (every such pair is tested), or of boundary
  faces: at some point x of a boundary face f of a tetrahedron t, another
  tetrahedron s holds the points just inside f near x, so s reaches more
  than ``tol`` into t's side of f's plane, comes within ``tol`` of the
  plane, and its box meets f's. Testing every such s (found in a tree of
  the tetrahedra's boxes) would find every overlap; the next three points
  show which faces need it. Nothing depends on the tetrahedra's orientation.
* **Certified vertices.** Two tetrahedra sharing a vertex overlap exactly
  when their cones at it do, and :mod:`regn.geometry._star_kernels` proves,
  vertex by vertex, that the cones of the tetrahedra around it are disjoint
  (most vertices of a valid mesh). A pair sharing a certified vertex needs
  no test: it is disjoint.
* **Boundary faces apart.** Two boundary faces sharing a certified vertex
  belong to one embedded fan and meet only at their common edge or vertex.
  Every other pair of boundary faces whose boxes meet is tested: a face
  within ``tol`` of another is *near*, and is tested as above.
* **Patches.** The other boundary faces are joined into patches across the
  edges of certified fans. Along a patch, the number of tetrahedra other
  than the face's own that hold the points just inside it cannot change:
  it changes only across another boundary face (or a face listed from one
  side), which would be near. So one face per patch is tested, at its
  centroid; a patch found overlapping there has every face tested (so that
  every pair overlapping just inside a boundary face is listed).

So every overlap is found (a region where ``w >= 2`` reaches a boundary
face of a near face or of some patch, or a face listed from one side), and
every pair it reports overlaps (each passes the exact test); it lists every
pair overlapping just inside a boundary face or across a face listed from
one side, but not a tetrahedron lying wholly inside another away from the
boundary (the pair overlapping at the region's edge is listed instead).
With a face listed from one side or more than twice, every boundary face is
tested. The work is counted (a box test one unit, an exact test eight) and
bounded by :data:`WORK_PER_TET` per solid tetrahedron plus
:data:`WORK_BASE`, so a hostile file (a face listed by thousands of
tetrahedra, thousands of long slanted ones whose boxes all meet) costs a
bounded time: past the budget the answer is undecided
(:attr:`Overlaps.decided` False).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

#: The overlap test's work budget: this many units per solid tetrahedron
#: (the disc-sized map of benchmarks/bench_format.py spends 34), plus
#: :data:`WORK_BASE`.
WORK_PER_TET = 1024
WORK_BASE = 1 << 20


class Overlaps(NamedTuple):
    tested: int            # pairs tested: listing one face, or near a face the test looked at
    pairs: np.ndarray      # (K,2) the pairs (first < second) whose interiors overlap
    tolerance: float       # metres: overlaps up to this depth count as touching (default
    #                        OVERLAP_REL times the largest extent of the tetrahedra)
    decided: bool = True   # False: the work budget ran out; ``pairs`` holds those found


def _vertex_indices(pts, tets):
    """(T,4) int64 vertex indices: ``tets`` when given (non-negative, one row
    per tetrahedron; renumbered when sparse), else the corners numbered by
    their exact positions."""
    if tets is not None:
        tets = np.asarray(tets)
        if tets.shape == (len(pts), 4) and np.issubdtype(tets.dtype, np.integer) \
                and tets.min() >= 0:
            if tets.max() < 4 * len(tets) + 64:
                return _read_only(tets, np.int64)
            # sparse indices: renumbered, the per-vertex tables sized by the tetrahedra
            return _read_only(np.unique(tets, return_inverse=True)[1].reshape(-1, 4), np.int64)
    _, inverse = np.unique(pts.reshape(-1, 3), axis=0, return_inverse=True)
    return _read_only(inverse.reshape(-1, 4), np.int64)


def _read_only(a, dtype):
    """``a`` as a C-contiguous read-only array of ``dtype``, copied only when
    it must be: the kernels are compiled for that one array type (a mesh's
    arrays are read-only)."""
    a = np.ascontiguousarray(a, dtype)
    if a.flags.writeable:
        a = a.view()
        a.flags.writeable = False
    return a


def overlapping_tets(tet_points, tets=None, tol=None, threads=1) -> Overlaps:
    """The pairs of tetrahedra (T,4,3) whose interiors overlap by more than
    ``tol`` metres (default :data:`~regn.tolerances.OVERLAP_REL` times their
    largest extent), found as the module docstring says from the vertex
    indices ``tets`` (T,4) (without them, corners at one position are one
    vertex). Tetrahedra with a non-finite coordinate are left out.
    ``threads`` > 1 shares the boundary faces' tests among that many
    threads (the kernels release the GIL); the answer does not depend on it."""
    pts = _read_only(np.asarray(tet_points, np.float64).reshape(-1, 4, 3), np.float64)
    if len(pts) < 2:
        return Overlaps(0, np.zeros((0, 2), np.int64), 0.0 if tol is None else float(tol))
    from . import _face_listing_kernels as listing
    from . import _face_proximity_kernels as proximity
    from . import _tet_pair_kernels as tet_pairs
    idx = _vertex_indices(pts, tets)
    lo, hi, solid, normal, positive, tol = tet_pairs.tet_boxes(
        pts, -1.0 if tol is None else float(tol))
    budget = WORK_PER_TET * int(np.count_nonzero(solid)) + WORK_BASE
    mate, folded = listing.face_listing(idx, solid, positive)
    found, tested, bad, work = _pairs(listing.shared_faces, pts, idx, mate, folded, _many(idx, mate),
                                      int(idx.max()) + 1, tol * tol, budget)
    faces = np.flatnonzero(mate == listing.BOUNDARY)
    certified, joins = _certified(pts, normal, idx, mate, faces, bad, threads)
    f_lo, f_hi = proximity.face_boxes(pts, faces, tol)
    start, entry = proximity.face_cells(f_lo, f_hi)
    keys = proximity.face_keys(idx, faces, certified)
    near = np.zeros(len(faces), np.bool_)
    cells = _cuts(start[::8], threads)
    left = budget - work
    work += sum(_run_all([lambda c0=c0, c1=c1: proximity.touching_faces(
        pts, idx, faces, f_lo, f_hi, keys, start, entry, c0, c1, near, tol, left)
        for c0, c1 in zip(cells[:-1], cells[1:])], threads))
    tree = proximity.box_tree(lo, hi, solid)
    # one face of each clean patch, at its centroid; then every face of the
    # patches that overlap there, and every face near another one
    patch = proximity.patches(len(faces), near, joins)
    found = [found]
    full = near if not bad.any() else np.ones(len(faces), np.bool_)
    if not bad.any():
        reps = np.flatnonzero((patch == np.arange(len(faces))) & ~near)
        pairs, hit, n, w = _pairs(proximity.near_faces, pts, idx, tree, faces, reps, True, certified, tol,
                                  budget - work)
        found.append(pairs)
        tested, work = tested + n, work + w
        full = near | np.isin(patch, reps[hit])
    which = np.flatnonzero(full)
    cuts = np.linspace(0, len(which), max(int(threads), 1) + 1).astype(np.int64)
    left = budget - work
    for pairs, _, n, w in _run_all([
            lambda part=which[c0:c1]: _pairs(proximity.near_faces, pts, idx, tree, faces, part, False,
                                             certified, tol, left)
            for c0, c1 in zip(cuts[:-1], cuts[1:])], threads):
        found.append(pairs)
        tested, work = tested + n, work + w
    pairs = np.unique(np.concatenate(found), axis=0) if sum(map(len, found)) else \
        np.zeros((0, 2), np.int64)
    return Overlaps(int(tested), pairs, float(tol), work <= budget)


def _certified(pts, normal, idx, mate, faces, bad, threads):
    """``(certified (V,), joins (J,2))`` of :func:`._star_kernels.certify`,
    the vertices shared among ``threads`` threads by their boundary faces."""
    from ._star_kernels import certify, vertex_stars
    st = vertex_stars(idx, mate, faces, len(bad))
    out = np.zeros(len(bad), np.bool_)
    cuts = _cuts(st.arc_start + st.star_start, threads)
    joins = _run_all([lambda v0=v0, v1=v1: certify(pts, normal, idx, faces, st, bad, v0, v1, out)
                      for v0, v1 in zip(cuts[:-1], cuts[1:])], threads)
    return out, np.concatenate(joins)


def _cuts(cumulative, threads):
    """Bounds cutting ``range(len(cumulative) - 1)`` into ``threads`` runs
    of about equal weight, ``cumulative`` being the running total."""
    n = max(int(threads), 1)
    marks = cumulative[-1] * np.arange(1, n) / n
    inner = np.searchsorted(cumulative, marks).clip(0, len(cumulative) - 1)
    return np.concatenate([[0], inner, [len(cumulative) - 1]]).astype(np.int64)


def _pairs(fn, *args):
    """``fn(*args, out)`` with the pairs it found in place of their count:
    run again with room for all of them when the first room ran out."""
    out = np.empty((64, 2), np.int64)
    res = fn(*args, out)
    if res[0] > len(out):
        out = np.empty((res[0], 2), np.int64)
        res = fn(*args, out)
    return (out[:res[0]],) + tuple(res[1:])


def _many(idx, mate):
    """The face slots listing a face several times, sorted by face."""
    from .tets import FACE_SLOTS
    from ._face_listing_kernels import MANY
    slots = np.flatnonzero(mate == MANY)
    tri = np.sort(idx[slots // 4][np.arange(len(slots))[:, None], FACE_SLOTS[slots % 4]], axis=1)
    return np.ascontiguousarray(slots[np.lexsort(tri.T[::-1])])


def _run_all(work, threads):
    """The results of the zero-argument callables ``work``: with one thread
    in turn here, else the first here and the others on regn's shared pool
    (each run here instead when no pool thread has started it by the time
    it is needed, so a busy pool costs no deadlock)."""
    if int(threads) <= 1 or len(work) == 1:
        return [w() for w in work]
    from .._jit import _pool
    others = [_pool().submit(w) for w in work[1:]]
    out = [work[0]()]
    for w, f in zip(work[1:], others):
        out.append(w() if f.cancel() else f.result())
    return out
