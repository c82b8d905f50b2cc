"""Compiled kernels of :mod:`regn.geometry.overlap` (imported only on first use):
the faces listed by the tetrahedra. :func:`face_listing` matches faces by
their vertex triples (and tells the ones listed from one side by the order
of their vertices); :func:`shared_faces` tests the two tetrahedra of every
face listed twice with the exact test of
:mod:`regn.geometry._tet_pair_kernels`. Every loop counts its work against a
budget and stops when it runs out (the answer is then undecided).
"""

from __future__ import annotations

import numpy as np

from .._jit import kernel
from ._tet_pair_kernels import TET_FACES, pair_overlaps

#: Work units an exact pair test counts (a box test counts one).
PAIR_WORK = 8


#: mate codes of face_listing
BOUNDARY, UNUSED, MANY = -1, -2, -3


@kernel(borrows=True)
def _same_face(tets, r, q):
    """Do face slots r and q (4 t + k) have the same vertex triple?"""
    t, k, s, m = r // 4, r % 4, q // 4, q % 4
    a, b, c = tets[t, TET_FACES[k, 0]], tets[t, TET_FACES[k, 1]], tets[t, TET_FACES[k, 2]]
    x, y, z = tets[s, TET_FACES[m, 0]], tets[s, TET_FACES[m, 1]], tets[s, TET_FACES[m, 2]]
    return (min(a, min(b, c)) == min(x, min(y, z)) and max(a, max(b, c)) == max(x, max(y, z))
            and a + b + c == x + y + z)


@kernel(borrows=True)
def _face_hash(tets, r, mask):
    t, k = r // 4, r % 4
    a, b, c = tets[t, TET_FACES[k, 0]], tets[t, TET_FACES[k, 1]], tets[t, TET_FACES[k, 2]]
    lo, hi = min(a, min(b, c)), max(a, max(b, c))
    h = (lo * 73856093) ^ ((a + b + c - lo - hi) * 19349663) ^ (hi * 83492791)
    return h & mask


@kernel(borrows=True)
def _outward_cycle(tets, r, positive):
    """Face slot r's vertices in the order that turns about its outward
    normal (its slot order turns about the inward one exactly when the
    tetrahedron is positive and r's slot is odd: ((v1 - v0) x (v2 - v0)) .
    (v3 - v0) and its like for each face)."""
    t, k = r // 4, r % 4
    a, b, c = tets[t, TET_FACES[k, 0]], tets[t, TET_FACES[k, 1]], tets[t, TET_FACES[k, 2]]
    if (k % 2 == 1) == positive[t]:
        return a, c, b
    return a, b, c


@kernel(borrows=True)
def _one_side(tets, r, q, positive):
    """Slots r, q listing one face: do their tetrahedra lie on one side of
    it (their outward orders of its vertices turn the same way)?"""
    a, b, c = _outward_cycle(tets, r, positive)
    x, y, z = _outward_cycle(tets, q, positive)
    if x == a:
        return y == b
    if y == a:
        return z == b
    return x == b


@kernel
def face_listing(tets, solid, positive):
    """``(mate, folded)``, (4T,) each: for each face slot r = 4 t + k of a
    solid tetrahedron, ``mate[r]`` the other slot listing its vertex triple
    when there is exactly one, :data:`BOUNDARY` when none, :data:`MANY` when
    several (:data:`UNUSED` for a tetrahedron that is not solid); and
    whether r's face is listed twice from one side. Faces are matched in a
    hash table of slots."""
    n_r = 4 * tets.shape[0]
    size = 2
    while size < 2 * n_r:
        size *= 2
    table = np.full(size, -1, np.int32)
    mate = np.full(n_r, UNUSED, np.int64)
    folded = np.zeros(n_r, np.bool_)
    for r in range(n_r):
        if not solid[r // 4]:
            continue
        h = _face_hash(tets, r, size - 1)
        while True:
            q = table[h]
            if q < 0:
                table[h] = r
                mate[r] = BOUNDARY
                break
            if _same_face(tets, r, q):
                if mate[q] == BOUNDARY:
                    mate[q], mate[r] = r, q
                    folded[q] = folded[r] = _one_side(tets, r, q, positive)
                else:
                    if mate[q] >= 0:
                        mate[mate[q]] = MANY
                    mate[q] = mate[r] = MANY
                break
            h = (h + 1) & (size - 1)
    return mate, folded


@kernel(borrows=True)
def record_pair(out, found, a, b):
    """Put the pair a, b in row ``found`` of ``out`` while it has room;
    ``found + 1``. (A growing array, reassigned in a loop, would make numba
    count its references at every turn.)"""
    if found < out.shape[0]:
        out[found, 0], out[found, 1] = min(a, b), max(a, b)
    return found + 1


@kernel
def shared_faces(pts, tets, mate, folded, many, n_v, tol2, budget, out):
    """``(found, tested, bad_vertex, work)``: the pairs of slots
    listing one face from one side (``mate`` and ``folded``, and the runs of
    slots ``many`` listing one face several times, sorted by face) whose
    tetrahedra overlap by more than ``tol``; how many listing pairs there
    are; the vertices of faces listed from one side or more than twice (no
    vertex certificate holds there); the work spent (past ``budget`` it
    stops). The first ``len(out)`` pairs found go to ``out``."""
    bad = np.zeros(n_v, np.bool_)
    found = tested = work = 0
    for r in range(mate.shape[0]):
        if mate[r] > r:
            tested += 1
            if folded[r]:
                _mark_face(tets, r, bad)
                work += PAIR_WORK
                if pair_overlaps(pts, tets, r // 4, mate[r] // 4, tol2):
                    found = record_pair(out, found, r // 4, mate[r] // 4)
    run = 0
    while run < many.shape[0] and work <= budget:
        end = run + 1
        while end < many.shape[0] and _same_face(tets, many[run], many[end]):
            end += 1
        _mark_face(tets, many[run], bad)
        for x in range(run, end):
            for y in range(x + 1, end):
                if work > budget:
                    break
                tested += 1
                work += PAIR_WORK
                if pair_overlaps(pts, tets, many[x] // 4, many[y] // 4, tol2):
                    found = record_pair(out, found, many[x] // 4, many[y] // 4)
        run = end
    return found, tested, bad, work


@kernel(borrows=True)
def _mark_face(tets, r, bad):
    t, k = r // 4, r % 4
    for s in range(3):
        bad[tets[t, TET_FACES[k, s]]] = True

