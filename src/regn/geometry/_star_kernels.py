"""Compiled vertex certificates of :mod:`regn.geometry.overlap` (imported
only on first use).

Two tetrahedra sharing a vertex overlap exactly when their cones at it do
(near the vertex each is its cone; cones apart are split by a plane through
the vertex, which splits the tetrahedra). :func:`certify` proves, vertex by
vertex, that the cones of the solid tetrahedra around it are disjoint, from
the faces around it alone (faces listed from one side, or more than twice,
leave their vertices uncertified):

* every face at the vertex listed twice, from opposite sides: the cones'
  link is a closed surface, so they cover every direction equally often;
  they are disjoint when one direction lies in exactly one cone;
* some faces listed once (on the boundary): these must form one fan (a
  pinch has two) whose arcs on the unit sphere around the vertex are a
  simple closed curve -- checked as the graph of a function over a plane
  (each face turns the same way about an axis ``up``, the fan winds around
  it once), or else arc by arc (no two but consecutive ones meet). Across
  that curve the number of cones holding a direction changes by one, so
  when some direction lies in no cone (``up``, or one just off an arc's
  middle on its face's outer side) the number is 0 or 1 everywhere.

A side too near to call (:data:`~regn.tolerances.SIDE_REL`) leaves the
vertex uncertified. Consecutive faces of a certified fan are returned too:
the overlap test joins them into patches.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .._jit import kernel
from ..tolerances import SIDE_REL
from ._face_listing_kernels import UNUSED
from ._tet_pair_kernels import TET_FACES, face_normal

#: Boundary faces around one vertex that a certificate handles (more: the
#: vertex is left uncertified).
MAX_ARCS = 64
#: How far (radians, about) off an arc's middle the direction that should
#: lie in no cone is taken.
OFF_ARC = 1e-4


@kernel
def _stars(n_v, tets, mate):
    """Vertex -> the corner slots 4 t + s of the solid tetrahedra at it
    (those whose slots ``mate`` does not mark unused), as CSR."""
    start = np.zeros(n_v + 1, np.int64)
    for r in range(mate.shape[0]):
        if mate[r] != UNUSED:
            start[tets[r // 4, r % 4] + 1] += 1
    for v in range(n_v):
        start[v + 1] += start[v]
    entry = np.empty(start[n_v], np.int64)
    fill = start[:-1].copy()
    for r in range(mate.shape[0]):
        if mate[r] != UNUSED:
            v = tets[r // 4, r % 4]
            entry[fill[v]] = r
            fill[v] += 1
    return start, entry


@kernel
def _fans(n_v, tets, faces):
    """Vertex -> the boundary faces at it (indices into the face slots
    ``faces``), as CSR."""
    start = np.zeros(n_v + 1, np.int64)
    for f in range(faces.shape[0]):
        for s in range(3):
            start[tets[faces[f] // 4, TET_FACES[faces[f] % 4, s]] + 1] += 1
    for v in range(n_v):
        start[v + 1] += start[v]
    entry = np.empty(start[n_v], np.int64)
    fill = start[:-1].copy()
    for f in range(faces.shape[0]):
        for s in range(3):
            v = tets[faces[f] // 4, TET_FACES[faces[f] % 4, s]]
            entry[fill[v]] = f
            fill[v] += 1
    return start, entry


@kernel(borrows=True)
def _cone_side(normal, s, c, d0, d1, d2):
    """Is the direction d strictly inside (1) or outside (-1) the cone of
    tetrahedron s at its vertex slot c (``normal``: outward face normals),
    or too near one of its three faces there to tell (0)?"""
    dd = d0 * d0 + d1 * d1 + d2 * d2
    near = False
    for k in range(4):
        if k == c:
            continue
        a0, a1, a2 = np.float64(normal[s, k, 0]), np.float64(normal[s, k, 1]), np.float64(normal[s, k, 2])
        x = a0 * d0 + a1 * d1 + a2 * d2
        if not x * x > SIDE_REL * SIDE_REL * (a0 * a0 + a1 * a1 + a2 * a2) * dd:
            near = True                   # (so too a normal overflowing float32)
        elif x > 0.0:
            return -1
    return 0 if near else 1


@kernel(borrows=True)
def _covering(normal, star_start, star, v, d0, d1, d2):
    """How many cones of vertex v's tetrahedra hold the direction d, or -1
    when d is too near a cone's face to tell."""
    n = 0
    for e in range(star_start[v], star_start[v + 1]):
        side = _cone_side(normal, star[e] // 4, star[e] % 4, d0, d1, d2)
        if side == 0:
            return -1
        n += side > 0
    return n


@kernel(borrows=True)
def _interior_certified(pts, normal, star_start, star, v):
    """All faces at v listed twice from opposite sides: is the direction
    towards the centroid of v's first tetrahedron in exactly one cone?"""
    s, c = star[star_start[v]] // 4, star[star_start[v]] % 4
    d0 = d1 = d2 = 0.0
    for u in range(4):
        d0 += pts[s, u, 0] - pts[s, c, 0]
        d1 += pts[s, u, 1] - pts[s, c, 1]
        d2 += pts[s, u, 2] - pts[s, c, 2]
    return _covering(normal, star_start, star, v, d0, d1, d2) == 1


@kernel(borrows=True)
def _arcs(pts, tets, faces, arc_start, arcs, v, fan):
    """The boundary faces around vertex v as arcs on the unit sphere around
    it, from one of their other two vertices to the other in the order that
    turns about the face's outward normal: their vertices (``fan.head``,
    ``fan.tail``), the unit direction to the first (``fan.unit``) and the
    face's unit outward normal (``fan.normal``). False for a flat face."""
    for i in range(arc_start[v + 1] - arc_start[v]):
        r = faces[arcs[arc_start[v] + i]]
        t, k = r // 4, r % 4
        o = 0
        while tets[t, TET_FACES[k, o]] != v:
            o += 1
        c, a, b = TET_FACES[k, o], TET_FACES[k, (o + 1) % 3], TET_FACES[k, (o + 2) % 3]
        n0, n1, n2, _, _ = face_normal(pts, t, k)
        u0, u1, u2 = pts[t, a, 0] - pts[t, c, 0], pts[t, a, 1] - pts[t, c, 1], pts[t, a, 2] - pts[t, c, 2]
        w0, w1, w2 = pts[t, b, 0] - pts[t, c, 0], pts[t, b, 1] - pts[t, c, 1], pts[t, b, 2] - pts[t, c, 2]
        if (u1 * w2 - u2 * w1) * n0 + (u2 * w0 - u0 * w2) * n1 + (u0 * w1 - u1 * w0) * n2 < 0.0:
            a, b = b, a
            u0, u1, u2 = w0, w1, w2
        fan.head[i], fan.tail[i] = tets[t, a], tets[t, b]
        lu = math.sqrt(u0 * u0 + u1 * u1 + u2 * u2)
        ln = math.sqrt(n0 * n0 + n1 * n1 + n2 * n2)
        if not (lu > 0.0 and ln > 0.0):
            return False
        fan.unit[i, 0], fan.unit[i, 1], fan.unit[i, 2] = u0 / lu, u1 / lu, u2 / lu
        fan.normal[i, 0], fan.normal[i, 1], fan.normal[i, 2] = n0 / ln, n1 / ln, n2 / ln
    return True


@kernel(borrows=True)
def _one_loop(fan, n):
    """Do the arcs chain into one loop? ``fan.nxt[i]`` is the arc after arc i."""
    for i in range(n):
        fan.nxt[i] = -1
        for j in range(n):
            if fan.head[j] == fan.tail[i]:
                if fan.nxt[i] >= 0:
                    return False          # two arcs leave that vertex: a pinch
                fan.nxt[i] = j
        if fan.nxt[i] < 0:
            return False
    i = fan.nxt[0]
    steps = 1
    while i != 0 and steps <= n:
        i = fan.nxt[i]
        steps += 1
    return steps == n


@kernel(borrows=True)
def _graph_axis(fan, n, up):
    """The sum of the faces' unit outward normals, unit, into ``up``: is
    every face turned about it the same way, by a margin (the fan is then
    the graph of a function over the plane across it)?"""
    up[0] = up[1] = up[2] = 0.0
    for i in range(n):
        for e in range(3):
            up[e] += fan.normal[i, e]
    norm = math.sqrt(up[0] * up[0] + up[1] * up[1] + up[2] * up[2])
    if not norm > 0.0:
        return False
    for e in range(3):
        up[e] /= norm
    for i in range(n):
        if not fan.normal[i, 0] * up[0] + fan.normal[i, 1] * up[1] + fan.normal[i, 2] * up[2] > SIDE_REL:
            return False
    return True


@kernel(borrows=True)
def _winds_once(fan, n, up):
    """Do the arcs (each turning about ``up`` the same way) wind around it
    once? Counted as the arcs crossing a half-plane through ``up`` from one
    side to the other (a turn crosses it once)."""
    m = 0 if abs(up[0]) <= min(abs(up[1]), abs(up[2])) else (1 if abs(up[1]) <= abs(up[2]) else 2)
    x0 = x1 = x2 = 0.0                     # an axis across up: e_m x up
    if m == 0:
        x1, x2 = -up[2], up[1]
    elif m == 1:
        x0, x2 = up[2], -up[0]
    else:
        x0, x1 = -up[1], up[0]
    winds = 0
    for i in range(n):
        j = fan.nxt[i]
        y0 = x0 * fan.unit[i, 0] + x1 * fan.unit[i, 1] + x2 * fan.unit[i, 2]
        y1 = x0 * fan.unit[j, 0] + x1 * fan.unit[j, 1] + x2 * fan.unit[j, 2]
        winds += y0 < 0.0 <= y1
    return winds == 1


@kernel(borrows=True)
def _side(n0, n1, n2, p0, p1, p2, scale):
    """The sign of n . p, or 0 when within SIDE_REL * ``scale`` of zero."""
    x = n0 * p0 + n1 * p1 + n2 * p2
    if not abs(x) > SIDE_REL * scale:
        return 0
    return 1 if x > 0.0 else -1


@kernel(borrows=True)
def _on_arc(a0, a1, a2, b0, b1, b2, p0, p1, p2):
    """For p on the great circle through a and b (shorter than a half
    turn): strictly inside arc ab (1), strictly outside (0), or near an
    end (2)."""
    n0, n1, n2 = a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0
    nn = math.sqrt(n0 * n0 + n1 * n1 + n2 * n2)
    pp = math.sqrt(p0 * p0 + p1 * p1 + p2 * p2)
    aa = math.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
    bb = math.sqrt(b0 * b0 + b1 * b1 + b2 * b2)
    x = _side(a1 * p2 - a2 * p1, a2 * p0 - a0 * p2, a0 * p1 - a1 * p0, n0, n1, n2, aa * pp * nn)
    y = _side(p1 * b2 - p2 * b1, p2 * b0 - p0 * b2, p0 * b1 - p1 * b0, n0, n1, n2, pp * bb * nn)
    if x < 0 or y < 0:
        return 0
    return 1 if x > 0 and y > 0 else 2


@kernel(borrows=True)
def _arcs_meet(a0, a1, a2, b0, b1, b2, c0, c1, c2, d0, d1, d2):
    """Do the arcs ab and cd (directions from the vertex; each shorter than
    a half turn) on the unit sphere meet: no (0), yes (1), too near to
    tell (2)?"""
    la = math.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
    lb = math.sqrt(b0 * b0 + b1 * b1 + b2 * b2)
    lc = math.sqrt(c0 * c0 + c1 * c1 + c2 * c2)
    ld = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
    n0, n1, n2 = a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0
    m0, m1, m2 = c1 * d2 - c2 * d1, c2 * d0 - c0 * d2, c0 * d1 - c1 * d0
    sc, sd = _side(n0, n1, n2, c0, c1, c2, la * lb * lc), _side(n0, n1, n2, d0, d1, d2, la * lb * ld)
    sa, sb = _side(m0, m1, m2, a0, a1, a2, lc * ld * la), _side(m0, m1, m2, b0, b1, b2, lc * ld * lb)
    if sc * sd == 1 or sa * sb == 1:
        return 0                          # one arc wholly on one side of the other's circle
    if sc and sd and sa and sb:
        # both straddle: they meet when both hold the same one of the circles' two crossings
        x0, x1, x2 = n1 * m2 - n2 * m1, n2 * m0 - n0 * m2, n0 * m1 - n1 * m0
        lx = math.sqrt(x0 * x0 + x1 * x1 + x2 * x2)
        u = _side(x0, x1, x2, a0 / la + b0 / lb, a1 / la + b1 / lb, a2 / la + b2 / lb, lx)
        w = _side(x0, x1, x2, c0 / lc + d0 / ld, c1 / lc + d1 / ld, c2 / lc + d2 / ld, lx)
        return 2 if u == 0 or w == 0 else int(u == w)
    if not sc and not sd:                 # on one circle: do the arcs overlap there?
        worst = 0
        for q in range(4):
            if q == 0:
                r = _on_arc(a0, a1, a2, b0, b1, b2, c0, c1, c2)
            elif q == 1:
                r = _on_arc(a0, a1, a2, b0, b1, b2, d0, d1, d2)
            elif q == 2:
                r = _on_arc(c0, c1, c2, d0, d1, d2, a0, a1, a2)
            else:
                r = _on_arc(c0, c1, c2, d0, d1, d2, b0, b1, b2)
            if r == 1:
                return 1
            worst = max(worst, r)
        return worst
    if (not sc) + (not sd) + (not sa) + (not sb) > 1:
        return 2
    # one end touches the other arc's circle: they meet exactly when it lies on that arc
    if not sc:
        return _on_arc(a0, a1, a2, b0, b1, b2, c0, c1, c2)
    if not sd:
        return _on_arc(a0, a1, a2, b0, b1, b2, d0, d1, d2)
    if not sa:
        return _on_arc(c0, c1, c2, d0, d1, d2, a0, a1, a2)
    return _on_arc(c0, c1, c2, d0, d1, d2, b0, b1, b2)


@kernel(borrows=True)
def _simple_loop(fan, n):
    """Is the loop of arcs a simple closed curve on the unit sphere: no two
    arcs but consecutive ones meet, and no arc turns straight back along
    the one before? (``fan.pole``: scratch for the arcs' circles' poles.)"""
    unit, nxt, pole = fan.unit, fan.nxt, fan.pole
    for i in range(n):
        j = nxt[i]
        pole[i, 0] = unit[i, 1] * unit[j, 2] - unit[i, 2] * unit[j, 1]
        pole[i, 1] = unit[i, 2] * unit[j, 0] - unit[i, 0] * unit[j, 2]
        pole[i, 2] = unit[i, 0] * unit[j, 1] - unit[i, 1] * unit[j, 0]
    for i in range(n):
        j, m = nxt[i], nxt[nxt[i]]
        p0, p1, p2 = pole[i, 0], pole[i, 1], pole[i, 2]
        lp = math.sqrt(p0 * p0 + p1 * p1 + p2 * p2)
        # consecutive: the next arc's end on i's circle, turning back
        if _side(p0, p1, p2, unit[m, 0], unit[m, 1], unit[m, 2], lp) == 0 and \
                _side(p0, p1, p2, pole[j, 0], pole[j, 1], pole[j, 2], lp) <= 0:
            return False
        for q in range(i + 1, n):
            r = nxt[q]
            if q == j or r == i:
                continue
            # most pairs: one arc wholly on one side of the other's circle
            if _side(p0, p1, p2, unit[q, 0], unit[q, 1], unit[q, 2], lp) * \
                    _side(p0, p1, p2, unit[r, 0], unit[r, 1], unit[r, 2], lp) == 1:
                continue
            if _arcs_meet(unit[i, 0], unit[i, 1], unit[i, 2], unit[j, 0], unit[j, 1], unit[j, 2],
                          unit[q, 0], unit[q, 1], unit[q, 2], unit[r, 0], unit[r, 1], unit[r, 2]):
                return False
    return True


@kernel(borrows=True)
def _boundary_certified(pts, normal, tets, faces, star_start, star, arc_start, arcs, v, fan, up):
    """A vertex on the boundary: its boundary faces form one fan whose arcs
    on the unit sphere around it are a simple closed curve (checked as a
    graph over the plane across ``up``, winding once, or arc by arc), and
    some direction lies in no cone (``up``, else one just off an arc's
    middle on its face's outer side)."""
    n = arc_start[v + 1] - arc_start[v]
    if n < 3 or n > MAX_ARCS or not _arcs(pts, tets, faces, arc_start, arcs, v, fan) \
            or not _one_loop(fan, n):
        return False
    if _graph_axis(fan, n, up) and _winds_once(fan, n, up):
        if _covering(normal, star_start, star, v, up[0], up[1], up[2]) == 0:
            return True
    elif not _simple_loop(fan, n):
        return False
    for i in range(n):
        j = fan.nxt[i]
        d0 = fan.unit[i, 0] + fan.unit[j, 0] + OFF_ARC * fan.normal[i, 0]
        d1 = fan.unit[i, 1] + fan.unit[j, 1] + OFF_ARC * fan.normal[i, 1]
        d2 = fan.unit[i, 2] + fan.unit[j, 2] + OFF_ARC * fan.normal[i, 2]
        if _covering(normal, star_start, star, v, d0, d1, d2) == 0:
            return True
    return False


class Fan(NamedTuple):
    """Scratch for one vertex's boundary faces (see :func:`_arcs`)."""
    head: np.ndarray        # (MAX_ARCS,) vertex at each arc's start
    tail: np.ndarray        # (MAX_ARCS,) vertex at its end
    unit: np.ndarray        # (MAX_ARCS,3) unit direction to its start
    normal: np.ndarray      # (MAX_ARCS,3) its face's unit outward normal
    nxt: np.ndarray         # (MAX_ARCS,) the arc after it
    pole: np.ndarray        # (MAX_ARCS,3) scratch


class Stars(NamedTuple):
    """Vertex -> its solid tetrahedra's corner slots (4 t + s) and its
    boundary faces (indices into the boundary face slots), as CSR."""
    star_start: np.ndarray
    star: np.ndarray
    arc_start: np.ndarray
    arcs: np.ndarray


@kernel
def vertex_stars(tets, mate, faces, n_v):
    """The :class:`Stars` of the ``n_v`` vertices (solid tetrahedra: those
    whose slots ``mate`` does not mark unused; ``faces``: the boundary face
    slots)."""
    star_start, star = _stars(n_v, tets, mate)
    arc_start, arcs = _fans(n_v, tets, faces)
    return Stars(star_start, star, arc_start, arcs)


@kernel
def certify(pts, normal, tets, faces, st, bad, v0, v1, out):
    """Certify the vertices ``v0..v1-1`` (``out[v]`` True): their solid
    tetrahedra provably have disjoint interiors (``normal``: their outward
    face normals; ``st``: :class:`Stars`; ``bad`` marks vertices not to
    certify, of faces listed from one side or more than twice). Returns
    (J,2) the pairs of consecutive boundary faces (indices into ``faces``)
    around each certified boundary vertex."""
    fan = Fan(np.empty(MAX_ARCS, np.int64), np.empty(MAX_ARCS, np.int64), np.empty((MAX_ARCS, 3)),
              np.empty((MAX_ARCS, 3)), np.empty(MAX_ARCS, np.int64), np.empty((MAX_ARCS, 3)))
    up = np.empty(3)
    joins = np.empty((st.arc_start[v1] - st.arc_start[v0], 2), np.int64)
    n_joins = 0
    for v in range(v0, v1):
        if bad[v] or st.star_start[v + 1] == st.star_start[v]:
            continue
        if st.arc_start[v + 1] == st.arc_start[v]:
            out[v] = _interior_certified(pts, normal, st.star_start, st.star, v)
            continue
        out[v] = _boundary_certified(pts, normal, tets, faces, st.star_start, st.star,
                                     st.arc_start, st.arcs, v, fan, up)
        if out[v]:
            for i in range(st.arc_start[v + 1] - st.arc_start[v]):
                joins[n_joins, 0] = st.arcs[st.arc_start[v] + i]
                joins[n_joins, 1] = st.arcs[st.arc_start[v] + fan.nxt[i]]
                n_joins += 1
    return joins[:n_joins].copy()
