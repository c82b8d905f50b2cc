"""Compiled kernels of the segment filter (:mod:`regn.query.sight.segment_filter`) and of
the batch segment queries built on it (line_of_sight, raycast_many).

The filter decides a segment without walking it when the decision is beyond
doubt; every other segment is walked by :func:`walk_segment`, so the answers
are the walk's. ``sight`` is a :class:`regn.query.sight.segment_filter.SightGrid` record,
``tables`` the :class:`regn.query.locating.locate.LocateTables`; both are read once at
a kernel's entry, and the helpers take plain arrays.

How the filter moves along a segment (in cell units, fraction s in [0, 1]):

* a *jump*: the cell holding the current point p stores the signed distance
  from its centre to the nearest wall (``clear``: > 0 the centre is inside
  the volume, < 0 outside). Less |p - centre| it bounds the wall-free ball
  around p, which the segment may cross at once;
* a *step*, when the ball is small: the piece of the segment inside the
  cell is tested against the triangles listed for the cell
  (:func:`piece_meets_triangle`), and the filter moves to the cell's exit.

Segments are filtered ``LANES`` at a time: the jumps of all lanes are
computed in simple loops over the lanes (which the compiler turns into
vector instructions, and whose memory loads overlap), steps and refills
lane by lane; a segment walked one at a time would wait on every load.
"""

from __future__ import annotations

import math

import numpy as np

from ..._jit import kernel
from ...geometry._closest_kernels import triangle_is_flat
from ...status import CLEAR, HIT, LOST, START_OUTSIDE
from ..locating._locate_kernels import fine_cell, locate_in_cell
from ._raycast_kernels import RING, walk_segment

# what the filter concludes about a segment
BLOCKED = 0          # a wall is crossed well inside it, or a stretch lies well outside
FREE = 1             # no wall near it, and a stretch known to be inside the volume
WALK = 2             # too close to call (or outside the filter's box): walk it
IF_START_INSIDE = 3  # no wall near it: clear exactly when its start is in the volume

# SightGrid.frame rows
ORIGIN, CELL, BOX_LO, BOX_HI = 0, 1, 2, 3      # CELL row: size, 1 / size, margin

#: segments filtered side by side
LANES = 64
#: a jump shorter than this many cells is not taken (a step is cheaper)
JUMP_MIN = 0.25
#: the pieces tested in neighbouring cells overlap by this fraction of the segment
PIECE_OVERLAP = 1e-9

# lane rows of the float lane table
_FX, _FY, _FZ, _DX, _DY, _DZ, _INV_LEN, _S, _CLEAR = range(9)
# lane states
_EMPTY, _ACTIVE, _PAST_END = 0, 1, 2

# piece_meets_triangle's answers
MISS, CROSS, UNSURE = 0, 1, 2


@kernel(borrows=True)
def piece_meets_triangle(tri, k, pax, pay, paz, pbx, pby, pbz, margin):
    """How the segment piece p_a -> p_b meets wall triangle k (a row of
    ``SightGrid.tri``: unit normal and offset, then each edge's in-plane
    inward unit normal and offset, so that each dot product is a signed
    distance in metres):

    * MISS: the piece stays at least ``margin`` away from the triangle (both
      ends that far on one side of its plane, or outside one of its edges,
      within the part of the piece near the plane);
    * CROSS: the ends lie at least ``margin`` on either side of the plane and
      the crossing point at least ``margin`` inside every edge;
    * UNSURE otherwise (and always for a row of NaN: a triangle too thin to
      trust its normal; every comparison with NaN fails)."""
    nx, ny, nz, off = tri[k, 0], tri[k, 1], tri[k, 2], tri[k, 3]
    da = nx * pax + ny * pay + nz * paz - off
    db = nx * pbx + ny * pby + nz * pbz - off
    res = UNSURE
    if (da > margin and db > margin) or (da < -margin and db < -margin):
        res = MISS
    else:
        dd = db - da
        s0, s1, sc = 0.0, 1.0, 0.0
        crosses = False
        if abs(dd) >= 2.0 * margin:
            # the part of the piece within the margin of the plane
            s0 = (margin - da) / dd
            s1 = (-margin - da) / dd
            if s0 > s1:
                s0, s1 = s1, s0
            s0 = max(s0, 0.0)
            s1 = min(s1, 1.0)
            sc = -da / dd
            crosses = (da >= margin and db <= -margin) or (da <= -margin and db >= margin)
        inside = crosses
        outside = False
        for e in range(3):
            o = 4 + 4 * e
            ea = tri[k, o] * pax + tri[k, o + 1] * pay + tri[k, o + 2] * paz - tri[k, o + 3]
            eb = tri[k, o] * pbx + tri[k, o + 1] * pby + tri[k, o + 2] * pbz - tri[k, o + 3]
            de = eb - ea
            if ea + s0 * de <= -margin and ea + s1 * de <= -margin:
                outside = True
            if not ea + sc * de >= margin:
                inside = False
        if outside:
            res = MISS
        elif inside:
            res = CROSS
    return res


@kernel(borrows=True)
def cell_piece(tri, cell_start, cell_tris, c, ax, ay, az, bx, by, bz, u0, u1, margin):
    """The piece [u0, u1] of segment a -> b against cell c's triangles: CROSS
    as soon as one is crossed, else UNSURE if one is, else MISS."""
    pax, pay, paz = ax + u0 * (bx - ax), ay + u0 * (by - ay), az + u0 * (bz - az)
    pbx, pby, pbz = ax + u1 * (bx - ax), ay + u1 * (by - ay), az + u1 * (bz - az)
    res = MISS
    r = cell_start[c]
    end = cell_start[c + 1]
    while r < end and res != CROSS:
        o = piece_meets_triangle(tri, cell_tris[r], pax, pay, paz, pbx, pby, pbz, margin)
        if o != MISS:
            res = o
        r += 1
    return res


@kernel(borrows=True)
def _lane_cells(lane, lx, ly, lz, cell, nx, ny, nz):
    """Each lane's current cell (a loop the compiler vectorises)."""
    for k in range(lane.shape[1]):
        s = lane[_S, k]
        ix = min(np.int64(lane[_FX, k] + s * lane[_DX, k]), nx - 1)
        iy = min(np.int64(lane[_FY, k] + s * lane[_DY, k]), ny - 1)
        iz = min(np.int64(lane[_FZ, k] + s * lane[_DZ, k]), nz - 1)
        lx[k] = ix
        ly[k] = iy
        lz[k] = iz
        cell[k] = (iz * ny + iy) * nx + ix


@kernel(borrows=True)
def _lane_jumps(lane, lx, ly, lz, state, jumped, seen):
    """Each active lane jumps across the wall-free ball around its point when
    that ball reaches JUMP_MIN cells (a loop the compiler vectorises)."""
    for k in range(lane.shape[1]):
        s = lane[_S, k]
        ox = lane[_FX, k] + s * lane[_DX, k] - lx[k] - 0.5
        oy = lane[_FY, k] + s * lane[_DY, k] - ly[k] - 0.5
        oz = lane[_FZ, k] + s * lane[_DZ, k] - lz[k] - 0.5
        r = lane[_CLEAR, k] - math.sqrt(ox * ox + oy * oy + oz * oz)
        j = (state[k] == _ACTIVE) & (r > JUMP_MIN)
        s_next = s + r * lane[_INV_LEN, k]
        lane[_S, k] = s_next if j else s
        jumped[k] = j
        seen[k] |= j
        state[k] = _PAST_END if (j & (s_next >= 1.0)) else state[k]


@kernel
def _within(p, q, lo, hi):
    """Both coordinates in [lo, hi] (False for NaN)."""
    return p >= lo and p <= hi and q >= lo and q <= hi


@kernel(borrows=True)
def _lane_start(lane, k, a, b, i, frame):
    """Put segment i in lane k; False (the lane left as it was) when an end
    lies outside the filter's box (or is not finite) or a == b."""
    ax, ay, az, bx, by, bz = a[i, 0], a[i, 1], a[i, 2], b[i, 0], b[i, 1], b[i, 2]
    ok = (_within(ax, bx, frame[BOX_LO, 0], frame[BOX_HI, 0])
          and _within(ay, by, frame[BOX_LO, 1], frame[BOX_HI, 1])
          and _within(az, bz, frame[BOX_LO, 2], frame[BOX_HI, 2]))
    if ok:
        inv_cell = frame[CELL, 1]
        dx, dy, dz = (bx - ax) * inv_cell, (by - ay) * inv_cell, (bz - az) * inv_cell
        length = math.sqrt(dx * dx + dy * dy + dz * dz)
        ok = length > 0.0
        lane[_FX, k] = (ax - frame[ORIGIN, 0]) * inv_cell
        lane[_FY, k] = (ay - frame[ORIGIN, 1]) * inv_cell
        lane[_FZ, k] = (az - frame[ORIGIN, 2]) * inv_cell
        lane[_DX, k], lane[_DY, k], lane[_DZ, k] = dx, dy, dz
        lane[_INV_LEN, k] = 1.0 / length
        lane[_S, k] = 0.0
    return ok


@kernel(borrows=True)
def _lane_step(lane, k, ix, iy, iz, c, tri, cell_start, cell_tris, frame, a, b, i):
    """One step of lane k (segment i) through its cell c = (ix, iy, iz):
    BLOCKED; or, having moved the lane to the cell's exit (s >= 1 past the
    segment's end), UNSURE when a listed triangle is too close to call, FREE
    for a cell without triangles known to be inside, else -1."""
    s = lane[_S, k]
    fx, fy, fz = lane[_FX, k], lane[_FY, k], lane[_FZ, k]
    dx, dy, dz = lane[_DX, k], lane[_DY, k], lane[_DZ, k]
    v = lane[_CLEAR, k]
    margin = frame[CELL, 2]
    ox, oy, oz = fx + s * dx - ix - 0.5, fy + s * dy - iy - 0.5, fz + s * dz - iz - 0.5
    res = -1
    if v < 0.0 and -v - math.sqrt(ox * ox + oy * oy + oz * oz) > margin * frame[CELL, 1]:
        res = BLOCKED              # the point lies well outside the volume
    else:
        ex = ((ix + (dx > 0)) - fx) / dx if dx != 0 else math.inf
        ey = ((iy + (dy > 0)) - fy) / dy if dy != 0 else math.inf
        ez = ((iz + (dz > 0)) - fz) / dz if dz != 0 else math.inf
        s_out = min(min(ex, ey), ez)
        if cell_start[c + 1] > cell_start[c]:
            o = cell_piece(tri, cell_start, cell_tris, c, a[i, 0], a[i, 1], a[i, 2],
                           b[i, 0], b[i, 1], b[i, 2], max(s - PIECE_OVERLAP, 0.0),
                           min(s_out + PIECE_OVERLAP, 1.0), margin)
            res = BLOCKED if o == CROSS else UNSURE if o == UNSURE else -1
        elif v < 0.0:
            res = BLOCKED          # no wall near the cell, and its centre is outside
        elif v > 0.0:
            res = FREE
        if res != BLOCKED:
            # past the exit (never backwards, and always forwards by a hair, so
            # a point rounded onto the boundary cannot stay in this cell)
            lane[_S, k] = max(s_out, s) + 0.5 * PIECE_OVERLAP
    return res


@kernel
def filter_segments(sight, a, b, start, stop, verdict):
    """The filter's verdict (BLOCKED, FREE, WALK, IF_START_INSIDE) on each
    segment a[i] -> b[i], i in [start, stop), into ``verdict[i - start]``."""
    tri, cell_start, cell_tris, clear = sight.tri, sight.cell_start, sight.cell_tris, \
        sight.clear
    frame, dims = sight.frame, sight.dims
    nx, ny, nz = dims[0], dims[1], dims[2]
    usable = cell_start.shape[0] > 1
    lane = np.zeros((9, LANES))
    lx = np.zeros(LANES, np.int64)
    ly = np.zeros(LANES, np.int64)
    lz = np.zeros(LANES, np.int64)
    cell = np.zeros(LANES, np.int64)
    state = np.zeros(LANES, np.int8)
    jumped = np.zeros(LANES, np.bool_)
    seen = np.zeros(LANES, np.bool_)
    unsure = np.zeros(LANES, np.bool_)
    seg = np.zeros(LANES, np.int64)
    nxt = start
    while True:
        n_active = 0
        for k in range(LANES):
            res = -1
            if state[k] == _PAST_END:
                res = FREE
            elif state[k] == _ACTIVE and not jumped[k]:
                res = _lane_step(lane, k, lx[k], ly[k], lz[k], cell[k], tri, cell_start,
                                 cell_tris, frame, a, b, seg[k])
                unsure[k] |= res == UNSURE
                seen[k] |= res == FREE
                res = BLOCKED if res == BLOCKED else FREE if lane[_S, k] >= 1.0 else -1
            if res >= 0:
                if res == FREE:
                    res = WALK if unsure[k] else FREE if seen[k] else IF_START_INSIDE
                verdict[seg[k] - start] = res
                state[k] = _EMPTY
            while state[k] == _EMPTY and nxt < stop:
                if usable and _lane_start(lane, k, a, b, nxt, frame):
                    seg[k] = nxt
                    state[k] = _ACTIVE
                    seen[k] = False
                    unsure[k] = False
                    jumped[k] = False
                else:
                    verdict[nxt - start] = WALK
                nxt += 1
            n_active += state[k] == _ACTIVE
        if n_active == 0:
            break
        for _ in range(4):
            _lane_cells(lane, lx, ly, lz, cell, nx, ny, nz)
            for k in range(LANES):
                lane[_CLEAR, k] = clear[cell[k]]
            _lane_jumps(lane, lx, ly, lz, state, jumped, seen)


@kernel
def _start_tet(W, frame, dims, cell_start, cell_tets, x, y, z):
    """locate's answer for one point (the fine-grid scan)."""
    c = fine_cell(frame, dims, x, y, z)
    return -1 if c < 0 else locate_in_cell(W, cell_start, cell_tets, c, x, y, z)


@kernel
def _walk_one(W, nbv, frame, dims, cell_start, cell_tets, a, b, i, no_record, seen):
    """raycast's walk of segment i: (status, last tet, exit slot, fraction),
    with raycast's rules for non-finite ends and starts outside."""
    ax, ay, az = a[i, 0], a[i, 1], a[i, 2]
    bx, by, bz = b[i, 0], b[i, 1], b[i, 2]
    status, last, slot, frac = LOST, -1, -1, math.nan
    if not (math.isfinite(ax) and math.isfinite(ay) and math.isfinite(az)):
        status = START_OUTSIDE
    elif not (math.isfinite(bx) and math.isfinite(by) and math.isfinite(bz)):
        status = LOST
    else:
        t = _start_tet(W, frame, dims, cell_start, cell_tets, ax, ay, az)
        if t < 0:
            status = START_OUTSIDE
        else:
            o, last, slot, frac, _ = walk_segment(W, nbv, ax, ay, az, bx, by, bz, t,
                                                  W.shape[0] + 8, no_record, seen)
            status = o if o == CLEAR or o == HIT else LOST
    return status, last, slot, frac


@kernel
def segments_clear(tables, sight, a, b, start, stop, out):
    """line_of_sight for segments start .. stop-1: out[i] = the walk would
    end CLEAR (the filter's verdict, else the walk itself)."""
    W, nbv, frame, dims = tables.W, tables.nbv, tables.frame, tables.dims
    cell_start, cell_tets = tables.cell_start, tables.cell_tets
    verdict = np.empty(stop - start, np.int8)
    filter_segments(sight, a, b, start, stop, verdict)
    no_record = np.empty(0, np.int64)
    seen = np.empty((RING, 2), np.int64)
    for i in range(start, stop):
        v = verdict[i - start]
        if v == FREE:
            out[i] = True
        elif v == BLOCKED:
            out[i] = False
        elif v == IF_START_INSIDE:
            out[i] = _start_tet(W, frame, dims, cell_start, cell_tets,
                                a[i, 0], a[i, 1], a[i, 2]) >= 0
        else:
            out[i] = _walk_one(W, nbv, frame, dims, cell_start, cell_tets, a, b, i,
                               no_record, seen)[0] == CLEAR


@kernel
def segments_walked(tables, sight, a, b, start, stop, status, last, slot, frac):
    """raycast_many for segments start .. stop-1: a segment the filter finds
    clear is CLEAR (no walk needed for its report); every other one is walked
    for its status, last tet, exit slot and fraction."""
    W, nbv, frame, dims = tables.W, tables.nbv, tables.frame, tables.dims
    cell_start, cell_tets = tables.cell_start, tables.cell_tets
    verdict = np.empty(stop - start, np.int8)
    filter_segments(sight, a, b, start, stop, verdict)
    no_record = np.empty(0, np.int64)
    seen = np.empty((RING, 2), np.int64)
    for i in range(start, stop):
        v = verdict[i - start]
        if v == FREE or (v == IF_START_INSIDE and _start_tet(
                W, frame, dims, cell_start, cell_tets, a[i, 0], a[i, 1], a[i, 2]) >= 0):
            status[i] = CLEAR
        else:
            status[i], last[i], slot[i], frac[i] = _walk_one(
                W, nbv, frame, dims, cell_start, cell_tets, a, b, i, no_record, seen)


@kernel
def triangle_rows(tri):
    """(K,3,3) wall triangles -> SightGrid.tri rows (see there)."""
    rows = np.zeros((tri.shape[0], 16))
    for k in range(tri.shape[0]):
        ax, ay, az = tri[k, 0, 0], tri[k, 0, 1], tri[k, 0, 2]
        bx, by, bz = tri[k, 1, 0], tri[k, 1, 1], tri[k, 1, 2]
        cx, cy, cz = tri[k, 2, 0], tri[k, 2, 1], tri[k, 2, 2]
        if triangle_is_flat(ax, ay, az, bx, by, bz, cx, cy, cz):
            rows[k] = math.nan
            continue
        nx, ny, nz = _unit(*_cross(bx - ax, by - ay, bz - az, cx - ax, cy - ay, cz - az))
        rows[k, 0], rows[k, 1], rows[k, 2] = nx, ny, nz
        rows[k, 3] = nx * ax + ny * ay + nz * az
        corners = ((ax, ay, az), (bx, by, bz), (cx, cy, cz))
        for e in range(3):
            px, py, pz = corners[e]
            qx, qy, qz = corners[(e + 1) % 3]
            rx, ry, rz = corners[(e + 2) % 3]
            mx, my, mz = _unit(*_cross(nx, ny, nz, qx - px, qy - py, qz - pz))
            if mx * (rx - px) + my * (ry - py) + mz * (rz - pz) < 0:
                mx, my, mz = -mx, -my, -mz
            o = 4 + 4 * e
            rows[k, o], rows[k, o + 1], rows[k, o + 2] = mx, my, mz
            rows[k, o + 3] = mx * px + my * py + mz * pz
    return rows


@kernel
def _cross(ux, uy, uz, vx, vy, vz):
    return uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx


@kernel
def _unit(x, y, z):
    n = math.sqrt(x * x + y * y + z * z)
    return x / n, y / n, z / n


@kernel
def segment_reports(code, a, b, last, slot, frac, exit_face, exit_normal, start, stop,
                    clear, face, point, t, normal):
    """Rows start .. stop-1 of a RaycastHits from the walks' status codes:
    a clear segment reports b at t = 1, every other row -1 / NaN. Given the
    exit tables (``exit_face`` (T,4), ``exit_normal`` (T,4,3), see
    raycast._exits; None for the caller that fills its hits itself), a hit
    reports the face its walk left tet ``last`` by, opposite vertex slot
    ``slot``, at fraction min(frac, 1). Returns the first hit row without
    such a face (inconsistent planes), -1 when none."""
    nan = math.nan
    bad = -1
    for i in range(start, stop):
        c = code[i]
        clear[i] = c == CLEAR
        face[i] = -1
        t[i] = 1.0 if c == CLEAR else nan
        for d in range(3):
            point[i, d] = b[i, d] if c == CLEAR else nan
            normal[i, d] = nan
        if exit_face is not None and c == HIT:
            f = exit_face[last[i], slot[i]]
            if f < 0:
                if bad < 0:
                    bad = i
                continue
            s = frac[i]
            if s > 1.0:
                s = 1.0
            face[i] = f
            t[i] = s
            for d in range(3):
                normal[i, d] = exit_normal[last[i], slot[i], d]
                point[i, d] = a[i, d] + s * (b[i, d] - a[i, d])
    return bad
