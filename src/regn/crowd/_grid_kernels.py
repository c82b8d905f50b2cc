"""Compiled spatial indexes of a crowd's agents (:mod:`regn.crowd.crowd`):
a hash of cubes (the separation pass's) and rows of cubes (the neighbour
search's).

Space is cut into cubes of side ``cell`` from the corner ``lo``; cube
(i, j, k) has the key ``(i + 1) << 42 | (j + 1) << 21 | (k + 1)`` and falls in
bucket ``hash(i, j, k) & mask`` of a table of ``mask + 1`` buckets (a power
of two, about twice the agents). :func:`build_hash` counting-sorts the
agents by bucket, in agent order, so a bucket's agents, and so every scan,
come in a fixed order. Unlike a dense grid, the table does not grow with
the space the agents spread over: a cube is as small as the search needs
however far apart the agents are. A bucket may hold agents of other cubes
(hash collisions): scans compare each agent's key with the cube's.

* :func:`coord` / :func:`bucket`: a cube coordinate, a cube's bucket;
* :func:`build_rows` / :func:`row_neighbours`: the neighbour search's grid,
  agents sorted by row of cubes and by column within a row (see there).
"""

from __future__ import annotations

import math

import numpy as np

from .._jit import kernel

#: cube coordinates are kept within 21 bits (the key packs three)
_SPAN = (1 << 21) - 4


@kernel(borrows=True)
def coord(x, lo, cell):
    """The cube coordinate of x along one axis (clamped to the key's span)."""
    v = (x - lo) / cell
    if not v > 0.0:                 # also NaN
        return 0
    if v >= _SPAN:
        return _SPAN
    return math.floor(v)


@kernel(borrows=True)
def key(i, j, k):
    return ((i + 1) << 42) | ((j + 1) << 21) | (k + 1)


@kernel(borrows=True)
def bucket(i, j, k, mask):
    return ((i * 73856093) ^ (j * 19349663) ^ (k * 83492791)) & mask


@kernel
def _counting_sort(keys, nkeys, seq):
    """(start (nkeys+1,), out): the items ``seq`` ordered by ``keys[item]``
    (0 .. nkeys-1), stably; key c's items are out[start[c]:start[c+1]]."""
    start = np.zeros(nkeys + 1, np.int64)
    for q in range(seq.shape[0]):
        start[keys[seq[q]] + 1] += 1
    for c in range(nkeys):
        start[c + 1] += start[c]
    fill = start[:-1].copy()
    out = np.empty(seq.shape[0], np.int64)
    for q in range(seq.shape[0]):
        c = keys[seq[q]]
        out[fill[c]] = seq[q]
        fill[c] += 1
    return start, out


@kernel
def build_hash(pos, lo, cell, mask):
    """(start (B+1,), order (N,), skey (N,), spos (N,3)): the agents at
    ``pos`` sorted by bucket (B = mask + 1); bucket b holds
    order[start[b]:start[b+1]], in agent order; skey[s] and spos[s] are the
    cube key and position of agent order[s]."""
    n = pos.shape[0]
    bid = np.empty(n, np.int64)
    kid = np.empty(n, np.int64)
    for a in range(n):
        i = coord(pos[a, 0], lo[0], cell)
        j = coord(pos[a, 1], lo[1], cell)
        k = coord(pos[a, 2], lo[2], cell)
        bid[a] = bucket(i, j, k, mask)
        kid[a] = key(i, j, k)
    start, order = _counting_sort(bid, mask + 1, np.arange(n))
    skey = np.empty(n, np.int64)
    spos = np.empty((n, 3))
    for s in range(n):
        a = order[s]
        skey[s] = kid[a]
        spos[s, 0], spos[s, 1], spos[s, 2] = pos[a, 0], pos[a, 1], pos[a, 2]
    return start, order, skey, spos


@kernel(borrows=True)
def _gap(x, lo, cell, k):
    """Distance along one axis from x to cube slab k (0 inside it)."""
    a = lo + k * cell
    if x < a:
        return a - x
    b = a + cell
    return x - b if x > b else 0.0


# --- rows: the neighbour search's grid ------------------------------------------
# Agents counting-sorted by row (k, j) of cubes, and within a row by the cube
# column i: a row's agents are a run of the sorted arrays, in column order,
# and the dense row table (dims[1] x dims[2] entries, a few per agent) is
# small enough to stay in cache. A search visits a row once for all the
# columns it needs (one binary search), not each cube on its own.


@kernel
def build_rows(pos, lo, cell, dims):
    """(rstart (R+1,), order (N,), scol (N,), spos (N,3)) of the agents at
    ``pos`` in cubes of side ``cell`` from ``lo``, ``dims`` (3,) cubes an axis
    (coordinates clamped into them): row r = k * dims[1] + j holds the
    sorted slots rstart[r]:rstart[r+1], ascending by column scol (ties in
    agent order); order[s] is slot s's agent and spos[s] its position."""
    n = pos.shape[0]
    nr = dims[1] * dims[2]
    col = np.empty(n, np.int64)
    row = np.empty(n, np.int64)
    for a in range(n):
        col[a] = min(coord(pos[a, 0], lo[0], cell), dims[0] - 1)
        j = min(coord(pos[a, 1], lo[1], cell), dims[1] - 1)
        k = min(coord(pos[a, 2], lo[2], cell), dims[2] - 1)
        row[a] = k * dims[1] + j
    # by column, then (stably) by row: a two-pass radix sort
    bycol = _counting_sort(col, dims[0], np.arange(n))[1]
    rstart, order = _counting_sort(row, nr, bycol)
    scol = np.empty(n, np.int64)
    spos = np.empty((n, 3))
    for s in range(n):
        a = order[s]
        scol[s] = col[a]
        spos[s, 0], spos[s, 1], spos[s, 2] = pos[a, 0], pos[a, 1], pos[a, 2]
    return rstart, order, scol, spos


@kernel(borrows=True)
def _scan_row(i, px, py, pz, r2, g, r, c0, c1, most, nb, nd, n):
    """Add the agents of row r in columns c0 .. c1 nearer than sqrt(r2)
    (and than the most-th found) to the sorted list nb/nd of n."""
    lo_s, hi_s = g.rstart[r], g.rstart[r + 1]
    while lo_s < hi_s:                       # the first slot of column >= c0
        mid = (lo_s + hi_s) >> 1
        if g.scol[mid] < c0:
            lo_s = mid + 1
        else:
            hi_s = mid
    sp = g.spos
    for s in range(lo_s, g.rstart[r + 1]):
        c = g.scol[s]
        if c > c1:
            break
        if n == most:                        # columns now past the most-th found
            e = g.lo[0] + c * g.cell - px
            if e > 0.0 and e * e >= nd[n - 1]:
                break
        dx, dy, dz = sp[s, 0] - px, sp[s, 1] - py, sp[s, 2] - pz
        d2 = dx * dx + dy * dy + dz * dz
        if not d2 < r2:
            continue
        if n == most and not d2 < nd[n - 1]:
            continue
        o = g.order[s]
        if o == i:
            continue
        m = n if n < most else most - 1
        while m > 0 and d2 < nd[m - 1]:
            nb[m] = nb[m - 1]
            nd[m] = nd[m - 1]
            m -= 1
        nb[m] = o
        nd[m] = d2
        if n < most:
            n += 1
    return n


@kernel(borrows=True)
def row_neighbours(i, pos, reach, g, most, nb, nd):
    """The ``most`` agents nearest agent i with centres closer than
    ``reach``, nearest first (ties: the one met first), into nb/nd (squared
    distances); returns how many. ``g``: the rows of ``pos`` (lo, cell,
    dims, rstart, order, scol, spos). Rows are visited in square rings
    round agent i's, nearest first; in each, only the columns whose cubes
    are nearer than ``reach`` and than the most-th nearest found; the search
    stops when the next ring is farther."""
    px, py, pz = pos[i, 0], pos[i, 1], pos[i, 2]
    lo, cell, dims = g.lo, g.cell, g.dims
    r2 = reach * reach
    ci = min(coord(px, lo[0], cell), dims[0] - 1)
    cj = min(coord(py, lo[1], cell), dims[1] - 1)
    ck = min(coord(pz, lo[2], cell), dims[2] - 1)
    rings = math.ceil(reach / cell)
    # first the agent's own cube and the two beside it in its row: a near
    # most-th found early narrows every later scan
    n = _scan_row(i, px, py, pz, r2, g, ck * dims[1] + cj, max(ci - 1, 0),
                  min(ci + 1, dims[0] - 1), most, nb, nd, 0)
    for ring in range(rings + 1):
        if ring >= 2:
            near = (ring - 1) * cell
            if near * near >= r2 or (n == most and near * near >= nd[n - 1]):
                break
        for k in range(max(ck - ring, 0), min(ck + ring + 1, dims[2])):
            gz = _gap(pz, lo[2], cell, k)
            for j in range(max(cj - ring, 0), min(cj + ring + 1, dims[1])):
                if abs(k - ck) != ring and abs(j - cj) != ring:
                    continue                     # inside the ring: seen before
                gy = _gap(py, lo[1], cell, j)
                bound = r2 if n < most else min(r2, nd[n - 1])
                left = bound - gy * gy - gz * gz
                if not left > 0.0:
                    continue
                w = math.sqrt(left)
                c0 = max(coord(px - w, lo[0], cell), 0)
                c1 = min(coord(px + w, lo[0], cell), dims[0] - 1)
                r = k * dims[1] + j
                if ring == 0:                    # its own row, less the cubes seen
                    if c0 <= ci - 2:
                        n = _scan_row(i, px, py, pz, r2, g, r, c0, min(c1, ci - 2), most,
                                      nb, nd, n)
                    if c1 >= ci + 2:
                        n = _scan_row(i, px, py, pz, r2, g, r, max(c0, ci + 2), c1, most,
                                      nb, nd, n)
                elif c0 <= c1:
                    n = _scan_row(i, px, py, pz, r2, g, r, c0, c1, most, nb, nd, n)
    return n
