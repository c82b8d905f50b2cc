"""Compiled separation pass of a crowd step (:mod:`regn.crowd.crowd`): the
positions the agents reach with their new velocities are projected apart,
round after round, until no two spheres overlap (by more than a tolerance).

Each round (:func:`separate_chunk`) reads the positions of the round before
(``src``) through a spatial hash built on them (:mod:`regn.crowd._grid_kernels`;
cubes at least as wide as the largest sum of two radii, so every touching
pair is in the 27 cubes round an agent's own) and writes the next ones (``dst``). An agent that overlaps
others is pushed away from each by its share of the overlap (the other's
priority over the sum of both: a half for equal priorities) plus a slack,
the pushes summed (a Jacobi step, so the answer is the same in any chunking
and on any number of threads). Its whole move of the step stays inside its
wall half-spaces and no longer than its safe move (``s.top``): a push that
cannot be kept so is cut back onto the wall planes, else the agent keeps
the position of the round before. Every pair is looked at, not only the
``max_neighbors`` nearest the avoidance step considered.
"""

from __future__ import annotations

import math

import numpy as np

from .._jit import kernel
from ._grid_kernels import bucket, coord, key

#: pushes aim this much (of the two radii's sum) beyond touching, so that
#: rounding and later rounds leave no overlap
SLACK = 1e-2
#: the hash's cubes are this much (of the largest push reach) wider than
#: needed, so later rounds use it until an agent drifts this far
MARGIN = 0.25
#: over[i] of an agent with no other within a push
NONE = -1.0
#: rounds of cutting a push back onto violated wall planes
WALL_PASSES = 3


@kernel(borrows=True)
def _push(s, src, i, g, over):
    """Agent i's summed push away from the agents it overlaps at ``src``
    (``g`` the hash over ``src``, cubes at least as wide as any two radii);
    over[i] = its largest overlap as a fraction of the two radii's sum."""
    ax, ay, az = src[i, 0], src[i, 1], src[i, 2]
    ri, pi = s.radius[i], s.priority[i]
    ci, cj, ck = coord(ax, g.lo[0], g.cell), coord(ay, g.lo[1], g.cell), \
        coord(az, g.lo[2], g.cell)
    dx = dy = dz = 0.0
    worst = NONE
    for k in range(max(ck - 1, 0), ck + 2):
        for j in range(max(cj - 1, 0), cj + 2):
            for a in range(max(ci - 1, 0), ci + 2):
                want = key(a, j, k)
                b = bucket(a, j, k, g.mask)
                for t in range(g.start[b], g.start[b + 1]):
                    if g.skey[t] != want:
                        continue
                    o = g.order[t]
                    if o == i:
                        continue
                    ex, ey, ez = ax - src[o, 0], ay - src[o, 1], az - src[o, 2]
                    rr = ri + s.radius[o]
                    want_d = rr * (1.0 + SLACK)
                    d2 = ex * ex + ey * ey + ez * ez
                    if not d2 < rr * rr:
                        continue
                    d = math.sqrt(d2)
                    worst = max(worst, (rr - d) / rr)
                    share = s.priority[o] / (pi + s.priority[o])
                    if d > 0.0:
                        f = (want_d - d) / d * share
                        dx, dy, dz = dx + f * ex, dy + f * ey, dz + f * ez
                    elif o > i:                      # the same centre: a fixed way apart
                        dx += want_d * share
                    else:
                        dx -= want_d * share
    over[i] = worst
    return dx, dy, dz


@kernel(borrows=True)
def _keep_inside(s, i, mx, my, mz):
    """The move (from s.pos[i]) cut back inside agent i's wall planes and
    its safe length s.top[i]; (ok, move)."""
    top = s.top[i]
    ln = math.sqrt(mx * mx + my * my + mz * mz)
    if ln > top:
        f = top / ln
        mx, my, mz = mx * f, my * f, mz * f
    nw = s.wcount[i]
    for _ in range(WALL_PASSES):
        bad = False
        for k in range(nw):
            c = s.wn[i, k, 0] * mx + s.wn[i, k, 1] * my + s.wn[i, k, 2] * mz + s.wgap[i, k]
            if c < 0.0:
                bad = True
                mx, my, mz = mx - c * s.wn[i, k, 0], my - c * s.wn[i, k, 1], \
                    mz - c * s.wn[i, k, 2]
        if not bad:
            break
    ok = mx * mx + my * my + mz * mz <= top * top * (1.0 + 1e-12)
    for k in range(nw):
        if s.wn[i, k, 0] * mx + s.wn[i, k, 1] * my + s.wn[i, k, 2] * mz + s.wgap[i, k] < 0.0:
            ok = False
    return ok, mx, my, mz


@kernel(borrows=True)
def _one(s, src, dst, over, g, i):
    """dst[i]: src[i] pushed apart from the agents it overlaps there (see
    the module docstring); over[i] its largest overlap at ``src``."""
    dx, dy, dz = _push(s, src, i, g, over)
    if dx == 0.0 and dy == 0.0 and dz == 0.0:
        dst[i, 0], dst[i, 1], dst[i, 2] = src[i, 0], src[i, 1], src[i, 2]
        return
    mx = src[i, 0] + dx - s.pos[i, 0]
    my = src[i, 1] + dy - s.pos[i, 1]
    mz = src[i, 2] + dz - s.pos[i, 2]
    ok, mx, my, mz = _keep_inside(s, i, mx, my, mz)
    if ok:
        dst[i, 0], dst[i, 1], dst[i, 2] = s.pos[i, 0] + mx, s.pos[i, 1] + my, \
            s.pos[i, 2] + mz
    else:
        dst[i, 0], dst[i, 1], dst[i, 2] = src[i, 0], src[i, 1], src[i, 2]


@kernel
def separate_chunk(s, src, dst, over, g, i0, i1):
    """The first round, for agents i0 .. i1-1 (:func:`_one`)."""
    for i in range(i0, i1):
        _one(s, src, dst, over, g, i)


@kernel
def separate_some(s, src, dst, over, g, ids, i0, i1):
    """A later round, for agents ids[i0:i1] (:func:`_one`)."""
    for q in range(i0, i1):
        _one(s, src, dst, over, g, ids[q])


@kernel
def candidates(s, pos, g, moved, mark):
    """The agents a later round must look at, ascending: those in ``moved``
    and those within a push of one of them at ``pos``. Any other agent had
    no other within a push before the last round and none of those it is
    near moved, so it has none now. ``mark``: (N,) zeros, left zeroed."""
    n = 0
    for q in range(moved.shape[0]):
        i = moved[q]
        if mark[i] == 0:
            mark[i] = 1
            n += 1
        ax, ay, az = pos[i, 0], pos[i, 1], pos[i, 2]
        ci, cj, ck = coord(ax, g.lo[0], g.cell), coord(ay, g.lo[1], g.cell), \
            coord(az, g.lo[2], g.cell)
        for k in range(max(ck - 1, 0), ck + 2):
            for j in range(max(cj - 1, 0), cj + 2):
                for a in range(max(ci - 1, 0), ci + 2):
                    want = key(a, j, k)
                    b = bucket(a, j, k, g.mask)
                    for t in range(g.start[b], g.start[b + 1]):
                        o = g.order[t]
                        if g.skey[t] != want or mark[o] != 0:
                            continue
                        ex, ey, ez = ax - pos[o, 0], ay - pos[o, 1], az - pos[o, 2]
                        rr = s.radius[i] + s.radius[o]
                        if ex * ex + ey * ey + ez * ez < rr * rr:
                            mark[o] = 1
                            n += 1
    out = np.empty(n, np.int64)
    m = 0
    for i in range(mark.shape[0]):
        if mark[i] != 0:
            mark[i] = 0
            out[m] = i
            m += 1
    return out


@kernel
def drift(pos, hpos, ids):
    """The farthest any agent ``ids`` is at ``pos`` from where it was at
    ``hpos`` (when the hash was built)."""
    w = 0.0
    for q in range(ids.shape[0]):
        i = ids[q]
        dx, dy, dz = pos[i, 0] - hpos[i, 0], pos[i, 1] - hpos[i, 1], pos[i, 2] - hpos[i, 2]
        w = max(w, dx * dx + dy * dy + dz * dz)
    return math.sqrt(w)


@kernel
def worst_overlap(over):
    """The largest entry of ``over`` (0 when none is larger)."""
    w = 0.0
    for v in over:
        w = max(w, v)
    return w
