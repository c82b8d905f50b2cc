"""The compiled kernels of ``regn.verify``; imported on first use.

They measure; the checks (in the modules named after the spec's parts)
compare the measurements with the spec's statements. Records come in as
native-order structured arrays of the layouts of :mod:`regn.format.layout`
(read by field name), several arrays as one small record
(:data:`Records`, :data:`Spheres`, :data:`GridPairs`):

* :func:`face_measures`: which tetrahedra list each face (section 2 against
  the tetrahedra's face slots, A and B), the normal's length, the point's
  residual;
* :func:`tet_measures`: per tetrahedron, its volume, each face plane's
  distances to its vertices, the vertex mean (and the cell holding it) and
  spread, the stored centre's distance from the mean, what the portal-cost
  rule gives and how far the stored costs are from it, and which vertex lies
  off each face's plane (so the face's own three vertices);
* :func:`grid_compare`, :func:`sphere_reach`: the grid's references against
  the expected (cell, tetrahedron) pairs and the tetrahedra's spheres.

Vertices are finite (loading checks them), so only the face records' floats
can be NaN or infinite; the kernels order NaN as ``np.sort`` does (last) and
``np.argmax`` does (the first NaN wins). Sums are taken in numpy's order
(``einsum``'s ``(x0*y0 + x2*y2) + x1*y1``), as they were when these checks had
numpy twins, so every report stays what it was.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from .._jit import kernel
from ..geometry._cell_kernels import cell_coord

#: The records the face and tetrahedron kernels read: ``tets``, ``faces``
#: native-order structured arrays (sections 1 and 2), ``vertices`` (V,3)
#: float64, ``pairs`` (6,2) the face slots of each portal pair
#: (:data:`regn.format.layout.PORTAL_PAIRS`), ``no_tet``/``no_slot`` the face
#: record's "no tetrahedron" values, and the grid: ``origin`` (bbox min),
#: ``cell`` (cell size), ``dims``.
Records = namedtuple("Records", "tets faces vertices pairs no_tet no_slot origin cell dims")
#: :func:`sphere_reach`'s input: the references as (``ref_cell``, ``ref_tet``),
#: the tetrahedron records ``tets`` (their stored centre and radius), each
#: cell's box ``cell_lo``/``cell_hi`` (C,3), and the reach tolerance
#: ``reach_rel``.
Spheres = namedtuple("Spheres", "ref_cell ref_tet tets cell_lo cell_hi reach_rel")
#: :func:`grid_compare`'s input: the file's grid as CSR (``indptr``,
#: ``ref_tet``), the expected pairs (``exp_cell`` ascending, ``exp_tet``), and
#: each tetrahedron's ``home`` cell (the one holding its vertex mean).
GridPairs = namedtuple("GridPairs", "indptr ref_tet exp_cell exp_tet home")

#: :func:`face_measures`' result, per face: ``listed`` how many tetrahedra
#: list it, ``other`` the lister (4 * tet + slot) that is not A, on faces
#: listed twice (-1 elsewhere), ``a_lists`` the face tetrahedron A lists in
#: slot_a, ``b`` (B, slot_b) as a lister 4 * B + slot_b (-1 when both say
#: "none", -2 when one does), ``length`` |n|, ``residual`` n.p + d.
FaceMeasures = namedtuple("FaceMeasures", "listed other a_lists b length residual")

#: :func:`tet_measures`' result, per tetrahedron: ``vol`` signed volume,
#: ``size`` largest side of its bounding box, ``third`` (T,4) the third
#: smallest |n.v+d| of each slot's face plane over the four vertices,
#: ``mean`` (T,3) vertex mean, ``home`` the cell holding it, ``spread``
#: largest vertex distance from the mean, ``centre_err`` distance of the
#: stored centre from the mean, ``want`` (T,6) distance between the centroids
#: of the faces of each portal pair, ``edge`` (T,6) either face of the pair is
#: on the boundary (listed once), ``portal_off`` (T,6) how far the stored
#: (cost, aux) is off (want, 0 at an edge else want): the larger difference,
#: NaN if either is; ``opposite`` (T,4) the vertex slot off each face slot's
#: plane (the farthest from it: the other three are the face's own vertices,
#: found from the [seed] plane, not from a slot convention); per face,
#: ``a_off`` (F,) n.v+d of the face plane in tetrahedron A's slot_a at the
#: vertex of A farthest from it.
TetMeasures = namedtuple("TetMeasures", "vol size third mean home spread centre_err want "
                                        "edge portal_off opposite a_off")


@kernel
def face_measures(rec):
    """:data:`FaceMeasures` of every face of ``rec.faces``; ``other`` is the
    second lister when the first is the face's own A."""
    faces, tets = rec.faces, rec.tets
    n_f = len(faces)
    out = FaceMeasures(np.zeros(n_f, np.int64), np.full(n_f, -1, np.int64),
                       np.empty(n_f, np.int64), np.empty(n_f, np.int64), np.empty(n_f),
                       np.empty(n_f))
    first = np.zeros(n_f, np.int64)
    second = np.zeros(n_f, np.int64)
    for t in range(len(tets)):
        for k in range(4):
            f = tets[t].faces[k]
            if out.listed[f] == 0:
                first[f] = 4 * t + k
            elif out.listed[f] == 1:
                second[f] = 4 * t + k
            out.listed[f] += 1
    for f in range(n_f):
        face = faces[f]
        out.a_lists[f] = tets[face.tet_a].faces[face.slot_a]
        no_b, no_slot = face.tet_b == rec.no_tet, face.slot_b == rec.no_slot
        if no_b or no_slot:
            out.b[f] = -1 if no_b and no_slot else -2
        else:
            out.b[f] = 4 * np.int64(face.tet_b) + face.slot_b
        if out.listed[f] == 2:
            a = 4 * np.int64(face.tet_a) + face.slot_a
            out.other[f] = second[f] if first[f] == a else first[f]
        n0, n1, n2 = (np.float64(face.normal[0]), np.float64(face.normal[1]),
                      np.float64(face.normal[2]))
        out.length[f] = np.sqrt((n0 * n0 + n1 * n1) + n2 * n2)
        out.residual[f] = ((n0 * np.float64(face.point[0]) + n2 * np.float64(face.point[2]))
                           + n1 * np.float64(face.point[1])) + np.float64(face.d)
    return out


@kernel(inline=True)
def _signed_volume(p):
    """((v1 - v0) x (v2 - v0)) . (v3 - v0) / 6 of the (4,3) corners ``p``."""
    a0, a1, a2 = p[1, 0] - p[0, 0], p[1, 1] - p[0, 1], p[1, 2] - p[0, 2]
    b0, b1, b2 = p[2, 0] - p[0, 0], p[2, 1] - p[0, 1], p[2, 2] - p[0, 2]
    c0, c1, c2 = p[3, 0] - p[0, 0], p[3, 1] - p[0, 1], p[3, 2] - p[0, 2]
    x0 = a1 * b2 - a2 * b1
    x1 = a2 * b0 - a0 * b2
    x2 = a0 * b1 - a1 * b0
    return ((x0 * c0 + x2 * c2) + x1 * c1) / 6.0


@kernel(inline=True)
def _after(a, b):
    """``a`` sorts after ``b`` in np.sort's order (NaN last)."""
    if a != a:
        return b == b
    return a > b


@kernel(inline=True)
def _third_smallest(s):
    """The third smallest of the four values ``s`` (NaN last; then sorts ``s``)."""
    if s[0] == s[0] and s[1] == s[1] and s[2] == s[2] and s[3] == s[3]:
        # the larger of the middle two of a 4-sorting network
        return max(max(min(s[0], s[1]), min(s[2], s[3])),
                   min(max(s[0], s[1]), max(s[2], s[3])))
    for i in range(1, 4):
        x = s[i]
        j = i - 1
        while j >= 0 and _after(s[j], x):
            s[j + 1] = s[j]
            j -= 1
        s[j + 1] = x
    return s[2]


@kernel(inline=True)
def _slot_plane(p, normal, d, dist, centroid):
    """Distances ``dist`` of the corners ``p`` from one face plane, and the
    centroid of the three on it (all but the farthest: np.argmax's choice,
    the first maximum or the first NaN) -> the farthest corner's index."""
    n0, n1, n2 = np.float64(normal[0]), np.float64(normal[1]), np.float64(normal[2])
    for v in range(4):
        dist[v] = (n0 * p[v, 0] + n2 * p[v, 2]) + n1 * p[v, 1] + d
    far = 0
    for v in range(1, 4):
        a, b = abs(dist[far]), abs(dist[v])
        if a == a and (b > a or b != b):
            far = v
    for e in range(3):
        acc = 0.0
        first = True
        for v in range(4):
            if v != far:
                acc = p[v, e] if first else acc + p[v, e]
                first = False
        centroid[e] = acc / 3.0
    return far


@kernel(inline=True)
def _mean_and_spread(p, mean):
    """The vertex mean (into ``mean``) and the largest corner distance from it."""
    for e in range(3):
        mean[e] = (((p[0, e] + p[1, e]) + p[2, e]) + p[3, e]) / 4
    spread = 0.0
    for v in range(4):
        a, b, c = p[v, 0] - mean[0], p[v, 1] - mean[1], p[v, 2] - mean[2]
        spread = max(spread, np.sqrt((a * a + b * b) + c * c))
    return spread


@kernel(inline=True)
def _bounding_size(p):
    """The largest side of the bounding box of the (4,3) corners ``p``."""
    size = 0.0
    for e in range(3):
        lo = min(min(p[0, e], p[1, e]), min(p[2, e], p[3, e]))
        hi = max(max(p[0, e], p[1, e]), max(p[2, e], p[3, e]))
        size = max(size, hi - lo)
    return size


@kernel(inline=True)
def _distance(a, b):
    """|a - b| of two 3-vectors."""
    x, y, z = a[0] - b[0], a[1] - b[1], a[2] - b[2]
    return np.sqrt((x * x + y * y) + z * z)


@kernel(inline=True)
def _home(rec, mean):
    """The linear cell holding the point ``mean``."""
    ix = cell_coord(mean[0], rec.origin[0], rec.cell[0], rec.dims[0])
    iy = cell_coord(mean[1], rec.origin[1], rec.cell[1], rec.dims[1])
    iz = cell_coord(mean[2], rec.origin[2], rec.cell[2], rec.dims[2])
    return (iz * rec.dims[1] + iy) * rec.dims[0] + ix


@kernel(inline=True)
def _portals(out, t, portal, centroid, pairs, slot_listed):
    """The portal measures of tetrahedron t (``centroid`` (4,3) its face
    centroids by slot, ``slot_listed`` how many list each slot's face)."""
    for q in range(6):
        i, j = pairs[q, 0], pairs[q, 1]
        want = _distance(centroid[i], centroid[j])
        edge = slot_listed[i] == 1 or slot_listed[j] == 1
        out.want[t, q] = want
        out.edge[t, q] = edge
        cost_off = abs(np.float64(portal[q, 0]) - want)
        aux_off = abs(np.float64(portal[q, 1]) - (0.0 if edge else want))
        # the larger, NaN if either is
        out.portal_off[t, q] = aux_off if aux_off != aux_off or aux_off > cost_off \
            else cost_off


@kernel
def tet_measures(rec, listed):
    """:data:`TetMeasures` of every tetrahedron of ``rec`` (its corners, its
    face slots and their planes, its stored centre and portal costs; the
    grid); ``listed`` (F,) how many tetrahedra list each face."""
    tets, faces = rec.tets, rec.faces
    n_t = len(tets)
    out = TetMeasures(np.empty(n_t), np.empty(n_t), np.empty((n_t, 4)), np.empty((n_t, 3)),
                      np.empty(n_t, np.int64), np.empty(n_t), np.empty(n_t),
                      np.empty((n_t, 6)), np.empty((n_t, 6), np.bool_), np.empty((n_t, 6)),
                      np.empty((n_t, 4), np.int64), np.empty(len(faces)))
    off = np.empty((n_t, 4))
    p = np.empty((4, 3))
    dist = np.empty(4)
    centroid = np.empty((4, 3))
    slot_listed = np.empty(4, np.int64)
    for t in range(n_t):
        for v in range(4):
            p[v] = rec.vertices[tets[t].verts[v]]
        out.vol[t] = _signed_volume(p)
        out.size[t] = _bounding_size(p)
        for k in range(4):
            f = tets[t].faces[k]
            slot_listed[k] = listed[f]
            far = _slot_plane(p, faces[f].normal, np.float64(faces[f].d), dist, centroid[k])
            out.opposite[t, k] = far
            off[t, k] = dist[far]
            for v in range(4):
                dist[v] = abs(dist[v])
            out.third[t, k] = _third_smallest(dist)
        out.spread[t] = _mean_and_spread(p, out.mean[t])
        out.home[t] = _home(rec, out.mean[t])
        out.centre_err[t] = _distance(tets[t].centre, out.mean[t])
        _portals(out, t, tets[t].portal, centroid, rec.pairs, slot_listed)
    for f in range(len(faces)):
        out.a_off[f] = off[faces[f].tet_a, faces[f].slot_a]
    return out


@kernel
def sphere_reach(rec):
    """How many references (cell ``rec.ref_cell[r]``, tetrahedron
    ``rec.ref_tet[r]``) have the tetrahedron's stored sphere (centre, radius)
    reach the closed cell box (``rec.cell_lo``/``cell_hi``):
    |c - clip(c, lo, hi)| <= radius * (1 + rec.reach_rel); a NaN centre
    reaches nothing."""
    n = 0
    for r in range(len(rec.ref_cell)):
        cc = rec.ref_cell[r]
        t = rec.ref_tet[r]
        centre = rec.tets[t].centre
        acc = 0.0
        for e in range(3):
            x = np.float64(centre[e])
            q = x
            if x == x:
                q = min(max(x, rec.cell_lo[cc, e]), rec.cell_hi[cc, e])
            dx = x - q
            acc = dx * dx if e == 0 else acc + dx * dx
        if np.sqrt(acc) <= np.float64(rec.tets[t].radius) * (1 + rec.reach_rel):
            n += 1
    return n


@kernel
def grid_compare(rec):
    """The file's grid (cell c lists ``rec.ref_tet[rec.indptr[c]:indptr[c+1]]``)
    against the expected pairs (``rec.exp_cell`` ascending, ``rec.exp_tet``).
    -> hit (R,) the reference is an expected pair, exp_listed (E,) the
    expected pair is listed, listed_home (T,) the cell ``rec.home[t]`` lists
    tetrahedron t, and the number of repeats within a cell."""
    indptr, ref_tet, exp_c, exp_t, home = (rec.indptr, rec.ref_tet, rec.exp_cell,
                                           rec.exp_tet, rec.home)
    n_t = len(home)
    hit = np.zeros(len(ref_tet), np.bool_)
    exp_listed = np.zeros(len(exp_t), np.bool_)
    listed_home = np.zeros(n_t, np.bool_)
    mark = np.full(n_t, -1, np.int64)      # cell in which t is expected
    pos = np.zeros(n_t, np.int64)          # ... as expected pair pos[t]
    seen = np.full(n_t, -1, np.int64)      # cell in which t was last listed
    dupes = 0
    e = 0
    for c in range(len(indptr) - 1):
        while e < len(exp_t) and exp_c[e] == c:
            mark[exp_t[e]] = c
            pos[exp_t[e]] = e
            e += 1
        for r in range(indptr[c], indptr[c + 1]):
            t = ref_tet[r]
            if seen[t] == c:
                dupes += 1
            seen[t] = c
            if mark[t] == c:
                hit[r] = True
                exp_listed[pos[t]] = True
            if home[t] == c:
                listed_home[t] = True
    return hit, exp_listed, listed_home, dupes
