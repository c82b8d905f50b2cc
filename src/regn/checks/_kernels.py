"""Compiled (numba) kernels of ``regn.verify``; imported only on first use
(every caller in :mod:`regn.checks` falls back to its numpy implementation,
the reference, without numba or with ``regn.geometry.USE_NUMBA = False``).

* :func:`tet_records`, :func:`face_floats`: sections 1 and 2 decoded from
  their raw (byte-swapped) words into the mesh's float64/int64 arrays;
* :func:`face_arrays`: the face checks in one pass (unit normals, plane
  residuals, own index, A/B listers and slots);
* :func:`tet_arrays`: in one pass over the tetrahedra, the arrays the
  tetrahedron checks compare with their tolerances; :func:`tet_checks` those
  comparisons, the portal-cost rule and each tetrahedron's home cell;
* :func:`grid_compare`, :func:`sphere_reach`: the grid's references against
  the expected pairs;
* :func:`pof0_walk`, :func:`pof0_pack`: the POF0 entry chain walked, and a
  canonical table packed, byte by byte.

Each uses the numpy code's arithmetic (einsum's ``(x0*y0 + x2*y2) + x1*y1``
dot products, norm's ``(x0^2 + x1^2) + x2^2``, left-to-right sums) and its
NaN behaviour (``np.sort`` puts NaN last, ``np.argmax`` and ``np.max`` take the
first NaN), so every check's counts and detail text are the same.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# _nmax/_nmin: NaN-propagating, like np.maximum/minimum; _cell_coord: cell_coords
from ..geometry._kernels import _cell_coord, _nmax, _nmin

# error_model="numpy": no zero-division checks (every divisor is a non-zero
# constant), which keeps the loops lean
_JIT = dict(cache=True, nogil=True, error_model="numpy")


@njit(**_JIT)
def _after(a, b):
    """``a`` sorts after ``b`` in np.sort's order (NaN last)."""
    if a != a:
        return b == b
    return a > b


@njit(**_JIT)
def tet_arrays(pts, nrm, d, tf, pairs):
    """pts (T,4,3), nrm (F,3), d (F,), tf (T,4) in range, pairs (6,2) ->
    vol (T,) signed volume, size (T,) largest bounding-box side, off (T,4)
    n.v+d of each slot's plane at its off-plane vertex, third (T,4)
    third-smallest |n.v+d| of the slot, opp (T,4) the off-plane vertex
    (argmax |n.v+d|), mean (T,3), rad (T,) max vertex distance from the mean,
    want (T,6) distance of the portal pairs' face centroids."""
    n_t = pts.shape[0]
    vol = np.empty(n_t)
    size = np.empty(n_t)
    off = np.empty((n_t, 4))
    third = np.empty((n_t, 4))
    opp = np.empty((n_t, 4), np.int64)
    mean = np.empty((n_t, 3))
    rad = np.empty(n_t)
    want = np.empty((n_t, 6))
    s = np.empty(4)
    fc = np.empty((4, 3))
    dk = np.empty(4)
    for t in range(n_t):
        # signed volume: cross(v1-v0, v2-v0) . (v3-v0) / 6, einsum's order
        a0 = pts[t, 1, 0] - pts[t, 0, 0]
        a1 = pts[t, 1, 1] - pts[t, 0, 1]
        a2 = pts[t, 1, 2] - pts[t, 0, 2]
        b0 = pts[t, 2, 0] - pts[t, 0, 0]
        b1 = pts[t, 2, 1] - pts[t, 0, 1]
        b2 = pts[t, 2, 2] - pts[t, 0, 2]
        c0 = pts[t, 3, 0] - pts[t, 0, 0]
        c1 = pts[t, 3, 1] - pts[t, 0, 1]
        c2 = pts[t, 3, 2] - pts[t, 0, 2]
        x0 = a1 * b2 - a2 * b1
        x1 = a2 * b0 - a0 * b2
        x2 = a0 * b1 - a1 * b0
        vol[t] = ((x0 * c0 + x2 * c2) + x1 * c1) / 6.0
        # the bounding box's largest side, NaN propagating (np.max)
        big = 0.0
        for e in range(3):
            hi = _nmax(_nmax(pts[t, 0, e], pts[t, 1, e]), _nmax(pts[t, 2, e], pts[t, 3, e]))
            lo = _nmin(_nmin(pts[t, 0, e], pts[t, 1, e]), _nmin(pts[t, 2, e], pts[t, 3, e]))
            big = hi - lo if e == 0 else _nmax(big, hi - lo)
        size[t] = big
        for k in range(4):
            f = tf[t, k]
            n0, n1, n2, df = nrm[f, 0], nrm[f, 1], nrm[f, 2], d[f]
            for v in range(4):
                x = (n0 * pts[t, v, 0] + n2 * pts[t, v, 2]) + n1 * pts[t, v, 1] + df
                dk[v] = x
                s[v] = abs(x)
            # argmax: the first maximum, or the first NaN
            best = 0
            for v in range(1, 4):
                if s[best] == s[best] and (s[v] > s[best] or s[v] != s[v]):
                    best = v
            opp[t, k] = best
            off[t, k] = dk[best]
            # the third smallest, NaN sorting last: without NaN, the larger
            # of the two middle values of a 4-sorting network (equal values
            # are equal numbers, |x| has no -0); with NaN an insertion sort
            if s[0] == s[0] and s[1] == s[1] and s[2] == s[2] and s[3] == s[3]:
                lo01 = min(s[0], s[1])
                hi01 = max(s[0], s[1])
                lo23 = min(s[2], s[3])
                hi23 = max(s[2], s[3])
                third[t, k] = max(max(lo01, lo23), min(hi01, hi23))
            else:
                for i in range(1, 4):
                    x = s[i]
                    j = i - 1
                    while j >= 0 and _after(s[j], x):
                        s[j + 1] = s[j]
                        j -= 1
                    s[j + 1] = x
                third[t, k] = s[2]
            # the centroid of the three vertices on the plane, in vertex order
            for e in range(3):
                acc = 0.0
                first = True
                masked = 0.0         # numpy adds the off vertex times 0
                for v in range(4):
                    if v != best:
                        if first:
                            acc = pts[t, v, e]
                            first = False
                        else:
                            acc = acc + pts[t, v, e]
                    elif not np.isfinite(pts[t, v, e]):
                        masked = np.nan      # inf * 0 or NaN * 0
                fc[k, e] = (acc + masked) / 3.0
        for e in range(3):
            mean[t, e] = (((pts[t, 0, e] + pts[t, 1, e]) + pts[t, 2, e]) + pts[t, 3, e]) / 4
        r = 0.0
        for v in range(4):
            a = pts[t, v, 0] - mean[t, 0]
            b = pts[t, v, 1] - mean[t, 1]
            c = pts[t, v, 2] - mean[t, 2]
            x = np.sqrt((a * a + b * b) + c * c)
            if v == 0 or x > r or x != x:
                if r == r:
                    r = x
        rad[t] = r
        for p in range(6):
            i, j = pairs[p, 0], pairs[p, 1]
            a = fc[i, 0] - fc[j, 0]
            b = fc[i, 1] - fc[j, 1]
            c = fc[i, 2] - fc[j, 2]
            want[t, p] = np.sqrt((a * a + b * b) + c * c)
    return vol, size, off, third, opp, mean, rad, want


@njit(**_JIT)
def sphere_reach(centre, radius, ref_c, ref_t, cell_lo, cell_hi):
    """How many references (cell ref_c[r], tet ref_t[r]) have the tet's sphere
    reach the closed cell box: |c - clip(c, lo, hi)| <= radius * (1 + 1e-6)
    (np.clip propagates NaN, which reaches nothing)."""
    n = 0
    for r in range(len(ref_c)):
        cc = ref_c[r]
        t = ref_t[r]
        acc = 0.0
        for e in range(3):
            x = centre[t, e]
            q = x
            if x == x:
                q = min(max(x, cell_lo[cc, e]), cell_hi[cc, e])
            dx = x - q
            acc = dx * dx if e == 0 else acc + dx * dx
        if np.sqrt(acc) <= radius[t] * (1 + 1e-6):
            n += 1
    return n


@njit(**_JIT)
def grid_compare(indptr, ref_t, exp_c, exp_t, home, n_t):
    """The file's grid (cell c lists ref_t[indptr[c]:indptr[c+1]]) against
    the expected pairs (exp_c ascending, then exp_t; every index in range).
    Returns hit (R,) the reference is an expected pair, exp_listed (E,) the
    expected pair is listed, listed_home (T,) the tet's home cell lists it,
    and the number of duplicate references (repeats within a cell)."""
    n_r = len(ref_t)
    n_e = len(exp_t)
    hit = np.zeros(n_r, np.bool_)
    exp_listed = np.zeros(n_e, np.bool_)
    listed_home = np.zeros(n_t, np.bool_)
    mark = np.full(n_t, -1, np.int64)      # cell in which t is expected
    pos = np.zeros(n_t, np.int64)          # ... as expected pair pos[t]
    seen = np.full(n_t, -1, np.int64)      # cell in which t was last listed
    dupes = 0
    e = 0
    for c in range(len(indptr) - 1):
        while e < n_e and exp_c[e] == c:
            t = exp_t[e]
            mark[t] = c
            pos[t] = e
            e += 1
        for r in range(indptr[c], indptr[c + 1]):
            t = ref_t[r]
            if seen[t] == c:
                dupes += 1
            else:
                seen[t] = c
            if mark[t] == c:
                hit[r] = True
                exp_listed[pos[t]] = True
            if home[t] == c:
                listed_home[t] = True
    return hit, exp_listed, listed_home, dupes


@njit(**_JIT)
def pof0_walk(buf, dialect):
    """:func:`regn.format.pof0._entry_starts` and the delta assembly of
    :func:`regn.format.pof0.decode` as one loop along the entry chain of the
    table ``buf`` (uint8): -> starts (E,) byte positions of the entries,
    deltas (E,), end (where the chain stops: the first 0 byte, or the
    table's length), overrun (the last entry runs past the table), longer
    (entries longer than their delta needs), long_entries (3- or 4-byte
    entries)."""
    n = len(buf)
    starts = np.empty(n, np.int64)
    deltas = np.empty(n, np.int64)
    k = 0
    pos = 0
    end = n
    overrun = False
    longer = 0
    long_entries = 0
    while pos < n:
        kind = buf[pos] >> 6
        ln = dialect if kind == 3 else np.int64(kind)
        if ln == 0:
            end = pos
            break
        starts[k] = pos
        if pos + ln > n:
            overrun = True
            k += 1
            break
        dv = np.int64(buf[pos] & 0x3F)
        for j in range(1, ln):
            dv = (dv << 8) | np.int64(buf[pos + j])
        deltas[k] = dv
        shortest = 1 if dv <= 0x3F else (2 if dv <= 0x3FFF else dialect)
        if shortest != ln:
            longer += 1
        if ln >= 3:
            long_entries += 1
        k += 1
        pos += ln
    return starts[:k], deltas[:k], end, overrun, longer, long_entries


@njit(**_JIT)
def face_arrays(fw, ff, tf, n_t, big):
    """The face records' checks in one pass. ``fw`` (F,12) the records as
    native uint32 words, ``ff`` the same memory as float32, ``tf`` (T,4) the
    tetrahedra's face indices (all in range), ``big``: the file is
    big-endian (where slot_a, slot_b and the zero field sit in word 11).
    -> nlen (F,) |n| as np.linalg.norm gives it, res (F,) n.p+d as
    einsum + d gives it, bad_w, bad_own, bad_a, bad_b, bad_z (F,) the
    failing records of face_w_one, face_own_index, face_tet_a_slot,
    face_tet_b_slot, face_zero_field, listed (F,) how many tetrahedra list
    each face, other (F,) the lister (4*tet+slot) that is not A, on faces
    listed twice (-1 elsewhere), ta, sa (F,) tetrahedron A and its slot."""
    n_f = fw.shape[0]
    nlen = np.empty(n_f)
    res = np.empty(n_f)
    bad_w = np.empty(n_f, np.bool_)
    bad_own = np.empty(n_f, np.bool_)
    bad_a = np.empty(n_f, np.bool_)
    bad_b = np.empty(n_f, np.bool_)
    bad_z = np.empty(n_f, np.bool_)
    listed = np.zeros(n_f, np.int64)
    p0 = np.zeros(n_f, np.int64)
    p1 = np.zeros(n_f, np.int64)
    other = np.full(n_f, -1, np.int64)
    ta_out = np.empty(n_f, np.int64)
    sa_out = np.empty(n_f, np.int64)
    n_pos = tf.shape[0] * 4
    for i in range(n_pos):            # the first two listers of each face
        f = tf[i // 4, i % 4]
        k = listed[f]
        if k == 0:
            p0[f] = i
        elif k == 1:
            p1[f] = i
        listed[f] = k + 1
    for f in range(n_f):
        n0 = np.float64(ff[f, 0])
        n1 = np.float64(ff[f, 1])
        n2 = np.float64(ff[f, 2])
        d = np.float64(ff[f, 3])
        nlen[f] = np.sqrt((n0 * n0 + n1 * n1) + n2 * n2)
        res[f] = ((n0 * np.float64(ff[f, 4]) + n2 * np.float64(ff[f, 6]))
                  + n1 * np.float64(ff[f, 5])) + d
        bad_w[f] = fw[f, 7] != 0x3F800000
        bad_own[f] = np.int64(fw[f, 8]) != f
        ta = np.int64(fw[f, 9])
        tb = np.int64(fw[f, 10])
        w11 = np.int64(fw[f, 11])
        if big:
            sa = w11 >> 24
            sb = (w11 >> 16) & 0xFF
            z = w11 & 0xFFFF
        else:
            sa = w11 & 0xFF
            sb = (w11 >> 8) & 0xFF
            z = w11 >> 16
        bad_z[f] = z != 0
        ta_out[f] = ta
        sa_out[f] = sa
        bad_a[f] = tf[ta, sa] != f
        a_pos = 4 * ta + sa
        k = listed[f]
        if k == 1:
            bad_b[f] = tb != 0xFFFFFFFF or sb != 0xFF
        elif k == 2:
            o = p1[f] if p0[f] == a_pos else p0[f]
            other[f] = o
            if tb == 0xFFFFFFFF:
                bad_b[f] = True
            else:
                b_pos = 4 * min(tb, n_t) + min(sb, 3)
                bad_b[f] = b_pos != o
        else:
            bad_b[f] = False
    return nlen, res, bad_w, bad_own, bad_a, bad_b, bad_z, listed, other, ta_out, sa_out


@njit(**_JIT)
def pof0_pack(deltas, dialect):
    """:func:`regn.format.pof0.encode`'s byte packing: each delta (positive,
    within the dialect's limit) in its shortest entry, big-endian, the top
    two bits the entry's length (01, 10, 11), zeros to a multiple of 4."""
    total = 0
    for i in range(len(deltas)):
        dv = deltas[i]
        total += 1 if dv <= 0x3F else (2 if dv <= 0x3FFF else dialect)
    out = np.zeros((total + 3) // 4 * 4, np.uint8)
    pos = 0
    for i in range(len(deltas)):
        dv = deltas[i]
        if dv <= 0x3F:
            out[pos] = 0x40 | dv
            pos += 1
        elif dv <= 0x3FFF:
            out[pos] = 0x80 | (dv >> 8)
            out[pos + 1] = dv & 0xFF
            pos += 2
        else:
            for k in range(dialect):
                out[pos + k] = (dv >> (8 * (dialect - 1 - k))) & 0xFF
            out[pos] |= 0xC0
            pos += dialect
    return out


@njit(**_JIT)
def tet_records(tw, tf32, vertices, big):
    """The tetrahedron records decoded in one pass. ``tw`` (T,24) the records
    as native uint32 words, ``tf32`` the same memory as float32, ``vertices``
    (V,3) float64 (every vertex index in range), ``big``: the file is
    big-endian (which half of words 4-7 holds which u16 index). -> tets (T,4),
    faces (T,4) int64, points (T,4,3), centre (T,3), radius (T,), portal
    (T,6,2) float64 and nonzero (T,) whether any of +0x50..+0x5F is set:
    the values of Mesh.tets, tet_faces, tet_points, tet_centres, tet_radii,
    portal_costs."""
    n_t = tw.shape[0]
    tets = np.empty((n_t, 4), np.int64)
    faces = np.empty((n_t, 4), np.int64)
    pts = np.empty((n_t, 4, 3))
    centre = np.empty((n_t, 3))
    radius = np.empty(n_t)
    portal = np.empty((n_t, 6, 2))
    nonzero = np.empty(n_t, np.bool_)
    for t in range(n_t):
        for j in range(2):
            a = np.int64(tw[t, 4 + j])
            b = np.int64(tw[t, 6 + j])
            if big:
                tets[t, 2 * j] = a >> 16
                tets[t, 2 * j + 1] = a & 0xFFFF
                faces[t, 2 * j] = b >> 16
                faces[t, 2 * j + 1] = b & 0xFFFF
            else:
                tets[t, 2 * j] = a & 0xFFFF
                tets[t, 2 * j + 1] = a >> 16
                faces[t, 2 * j] = b & 0xFFFF
                faces[t, 2 * j + 1] = b >> 16
        for v in range(4):
            i = tets[t, v]
            for e in range(3):
                pts[t, v, e] = vertices[i, e]
        for e in range(3):
            centre[t, e] = np.float64(tf32[t, e])
        radius[t] = np.float64(tf32[t, 3])
        for p in range(6):
            portal[t, p, 0] = np.float64(tf32[t, 8 + 2 * p])
            portal[t, p, 1] = np.float64(tf32[t, 9 + 2 * p])
        nonzero[t] = (tw[t, 20] != 0) | (tw[t, 21] != 0) | (tw[t, 22] != 0) | \
            (tw[t, 23] != 0)
    return tets, faces, pts, centre, radius, portal, nonzero


@njit(**_JIT)
def face_floats(ff):
    """(F,12) face records as float32 -> normal (F,3), d (F,), point (F,3)
    float64: the values of Mesh.face_normals, face_d, face_points."""
    n_f = ff.shape[0]
    nrm = np.empty((n_f, 3))
    d = np.empty(n_f)
    pt = np.empty((n_f, 3))
    for f in range(n_f):
        for e in range(3):
            nrm[f, e] = np.float64(ff[f, e])
            pt[f, e] = np.float64(ff[f, 4 + e])
        d[f] = np.float64(ff[f, 3])
    return nrm, d, pt


@njit(**_JIT)
def tet_checks(vol, thr, third, off, ta, sa, mean, rad, centre, radius, want, portal,
               listed, tf, pairs, tol, bbox_min, cell_size, dims):
    """The tetrahedron and portal checks' comparisons, as regn.checks does
    them in numpy: -> bad_vol, bad_orient (T,), bad_plane (T,4), s_out,
    bad_out (F,), bad_cr (T,), want_aux, bad_pc (T,6), the number of pairs
    with aux == cost and with aux == 0, and home (T,) the linear cell of each
    vertex mean (Mesh.cell_of)."""
    n_t = vol.shape[0]
    n_f = ta.shape[0]
    bad_vol = np.empty(n_t, np.bool_)
    bad_orient = np.empty(n_t, np.bool_)
    bad_plane = np.empty((n_t, 4), np.bool_)
    bad_cr = np.empty(n_t, np.bool_)
    want_aux = np.empty((n_t, 6))
    bad_pc = np.empty((n_t, 6), np.bool_)
    home = np.empty(n_t, np.int64)
    s_out = np.empty(n_f)
    bad_out = np.empty(n_f, np.bool_)
    same = 0
    aux0 = 0
    nx, ny = dims[0], dims[1]
    bslot = np.empty(4, np.bool_)
    for t in range(n_t):
        bad_vol[t] = not (abs(vol[t]) > thr[t])
        bad_orient[t] = not (vol[t] > 0)
        for k in range(4):
            bad_plane[t, k] = not (third[t, k] <= tol)
        a = centre[t, 0] - mean[t, 0]
        b = centre[t, 1] - mean[t, 1]
        c = centre[t, 2] - mean[t, 2]
        cerr = np.sqrt((a * a + b * b) + c * c)
        rerr = abs(radius[t] - rad[t])
        bad_cr[t] = not ((cerr <= tol) and (rerr <= tol))
        for k in range(4):
            bslot[k] = listed[tf[t, k]] == 1
        for p in range(6):
            eb = bslot[pairs[p, 0]] | bslot[pairs[p, 1]]
            wa = 0.0 if eb else want[t, p]
            want_aux[t, p] = wa
            cost = portal[t, p, 0]
            aux = portal[t, p, 1]
            bad_pc[t, p] = not ((abs(cost - want[t, p]) <= tol) and (abs(aux - wa) <= tol))
            if cost == aux:
                same += 1
            if aux == 0:
                aux0 += 1
        ix = _cell_coord(mean[t, 0], bbox_min[0], cell_size[0], dims[0])
        iy = _cell_coord(mean[t, 1], bbox_min[1], cell_size[1], dims[1])
        iz = _cell_coord(mean[t, 2], bbox_min[2], cell_size[2], dims[2])
        home[t] = (iz * ny + iy) * nx + ix
    for f in range(n_f):
        s = off[ta[f], sa[f]]
        s_out[f] = s
        bad_out[f] = not (s < 0)
    return (bad_vol, bad_orient, bad_plane, s_out, bad_out, bad_cr, want_aux, bad_pc,
            same, aux0, home)
