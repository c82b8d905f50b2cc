"""Compiled phases of one crowd step (:mod:`regn.crowd.crowd`).

* :func:`plan_chunk`: per agent, its corner (the farthest corridor corner
  it sees for its radius, a swept sphere), its preferred velocity (toward
  it, slowing to stop at the goal, within its acceleration), its wall
  planes and its neighbours' ORCA planes, and the velocity the linear
  program picks (:mod:`regn.crowd._orca_kernels`);
* :func:`move_chunk`: every agent moves with its new velocity; arrival and
  progress (the stuck watch) are updated.

Each agent reads the state of the step before and writes only its own
rows: the answers do not depend on the order agents are visited in, nor on
how they are cut into chunks, nor on the number of threads.
"""

from __future__ import annotations

import math

import numpy as np

from .._jit import kernel
from ..geometry._closest_kernels import closest_point_on_prepared_triangle
from ..query.sight._sweep_kernels import sphere_sweep
from ..query.walls._nearest_kernels import box_d2
from ._grid_kernels import row_neighbours
from ._orca_kernels import orca_plane, solve

# status codes (regn.crowd.crowd.STATUS names them)
IDLE = 0
MOVING = 1
ARRIVED = 2
STUCK = 3
NO_PATH = 4

# flags plan_chunk raises for the Python side
REPLAN = 1          # the agent lost sight of its corner: off its corridor
WALLED = 2          # its wall planes left no velocity: it holds still

#: an agent of a group (a goal field) has arrived when within this much of
#: the radii's sum of a groupmate that has
GATHER = 1.1
#: corners an agent may skip ahead per step
SKIP = 4
#: the preferred velocity of an agent with neighbours turns this much (of
#: its length) to its right (:func:`keep_right`)
KEEP_RIGHT = 0.02


@kernel(borrows=True)
def wall_planes(box, node, tri, tbox, flat, stack, px, py, pz, reach, most, wd, wq):
    """The ``most`` wall triangles nearest p within ``reach``: their
    distances (ascending) into wd and closest points into wq; returns (how
    many, the distance of the nearest one left out (inf: none))."""
    n = 0
    dropped = math.inf
    r2 = reach * reach
    if node.shape[0] == 0 or not box_d2(box, 0, px, py, pz) <= r2:
        return 0, dropped
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        k = stack[top]
        first = node[k, 0]
        if node[k, 1] == 0:
            for child in (first, first + 1):
                if box_d2(box, child, px, py, pz) <= r2:
                    stack[top] = child
                    top += 1
            continue
        for t in range(first, first + node[k, 1]):
            if not box_d2(tbox, t, px, py, pz) <= r2:
                continue
            qx, qy, qz = closest_point_on_prepared_triangle(
                tri[t, 0], tri[t, 1], tri[t, 2], tri[t, 3], tri[t, 4], tri[t, 5],
                tri[t, 6], tri[t, 7], tri[t, 8], px, py, pz, flat[t] != 0)
            d = math.sqrt((qx - px) ** 2 + (qy - py) ** 2 + (qz - pz) ** 2)
            if not d <= reach:
                continue
            if n == most:
                if not d < wd[n - 1]:
                    dropped = min(dropped, d)
                    continue
                dropped = min(dropped, wd[n - 1])
            m = n if n < most else most - 1
            while m > 0 and d < wd[m - 1]:
                wd[m] = wd[m - 1]
                wq[m, 0], wq[m, 1], wq[m, 2] = wq[m - 1, 0], wq[m - 1, 1], wq[m - 1, 2]
                m -= 1
            wd[m] = d
            wq[m, 0], wq[m, 1], wq[m, 2] = qx, qy, qz
            if n < most:
                n += 1
    return n, dropped


@kernel(borrows=True)
def _seg_dist2(px, py, pz, ax, ay, az, bx, by, bz):
    """Squared distance from p to segment ab."""
    dx, dy, dz = bx - ax, by - ay, bz - az
    l2 = dx * dx + dy * dy + dz * dz
    t = 0.0
    if l2 > 0.0:
        t = min(max(((px - ax) * dx + (py - ay) * dy + (pz - az) * dz) / l2, 0.0), 1.0)
    ex, ey, ez = ax + t * dx - px, ay + t * dy - py, az + t * dz - pz
    return ex * ex + ey * ey + ez * ez


@kernel(borrows=True)
def _sees(box, node, tri, tbox, flat, stack, px, py, pz, q, k, r):
    """Does a sphere of radius r fly from p to corner q[k] touching no wall?"""
    if node.shape[0] == 0:
        return True
    _, hit = sphere_sweep(box, node, tri, tbox, flat, stack, px, py, pz,
                          q[k, 0], q[k, 1], q[k, 2], r, False)
    return hit < 0


@kernel(borrows=True)
def steer(s, w, i, dt, stack):
    """Agent i's corner (advanced along its corridor as far as it sees) and
    preferred velocity, into s.corner and s.pref; returns REPLAN when it no
    longer sees its corner, else 0."""
    px, py, pz = s.pos[i, 0], s.pos[i, 1], s.pos[i, 2]
    vx, vy, vz = s.vel[i, 0], s.vel[i, 1], s.vel[i, 2]
    r = s.radius[i]
    c0, c1 = s.cstart[i], s.cstart[i + 1]
    flag = 0
    tx, ty, tz = px, py, pz
    last = True
    if c1 - c0 >= 2 and s.status[i] != NO_PATH:
        k = min(max(s.corner[i], c0 + 1), c1 - 1)
        q = s.cpts
        off = _seg_dist2(px, py, pz, q[k - 1, 0], q[k - 1, 1], q[k - 1, 2],
                         q[k, 0], q[k, 1], q[k, 2]) > 0.25 * r * r
        if off and not _sees(w.box, w.node, w.tri, w.tbox, w.flat, stack, px, py, pz, q, k, r):
            flag = REPLAN
        skip = 0
        while flag == 0 and k < c1 - 1 and skip < SKIP:
            if not _sees(w.box, w.node, w.tri, w.tbox, w.flat, stack, px, py, pz, q, k + 1, r):
                break
            k += 1
            skip += 1
        s.corner[i] = k
        tx, ty, tz = q[k, 0], q[k, 1], q[k, 2]
        last = k == c1 - 1
    dx, dy, dz = tx - px, ty - py, tz - pz
    d = math.sqrt(dx * dx + dy * dy + dz * dz)
    vmax, amax = s.max_speed[i], s.max_accel[i]
    speed = 0.0
    if d > 0.0:
        speed = vmax
        if last:
            speed = min(speed, d / dt)
            if amax < math.inf:
                speed = min(speed, math.sqrt(2.0 * amax * d))
        dx, dy, dz = dx / d * speed, dy / d * speed, dz / d * speed
    if s.max_turn[i] < math.inf:
        dx, dy, dz = turn_limited(vx, vy, vz, dx, dy, dz, s.max_turn[i] * dt)
    # within the acceleration: the change of velocity at most amax dt
    ex, ey, ez = dx - vx, dy - vy, dz - vz
    e = math.sqrt(ex * ex + ey * ey + ez * ez)
    lim = amax * dt
    if e > lim:
        ex, ey, ez = ex * (lim / e), ey * (lim / e), ez * (lim / e)
    s.pref[i, 0], s.pref[i, 1], s.pref[i, 2] = vx + ex, vy + ey, vz + ez
    return flag


@kernel(borrows=True)
def turn_limited(vx, vy, vz, dx, dy, dz, most):
    """The desired velocity d with its heading turned from v's by at most
    ``most`` radians (toward d's, in the plane of the two; its speed kept).
    d as it is when v or d is zero."""
    vs = math.sqrt(vx * vx + vy * vy + vz * vz)
    ds = math.sqrt(dx * dx + dy * dy + dz * dz)
    if vs == 0.0 or ds == 0.0:
        return dx, dy, dz
    ux, uy, uz = vx / vs, vy / vs, vz / vs
    c = (ux * dx + uy * dy + uz * dz) / ds
    if c >= math.cos(most):
        return dx, dy, dz
    # the unit vector across v toward d (any one when d is straight behind)
    px, py, pz = dx / ds - c * ux, dy / ds - c * uy, dz / ds - c * uz
    pl = math.sqrt(px * px + py * py + pz * pz)
    if pl < 1e-9:
        ax, ay, az = (0.0, 0.0, 1.0) if abs(uz) < 0.9 else (0.0, 1.0, 0.0)
        px, py, pz = uy * az - uz * ay, uz * ax - ux * az, ux * ay - uy * ax
        pl = math.sqrt(px * px + py * py + pz * pz)
    px, py, pz = px / pl, py / pl, pz / pl
    cm, sm = math.cos(most), math.sin(most)
    return ((cm * ux + sm * px) * ds, (cm * uy + sm * py) * ds, (cm * uz + sm * pz) * ds)


@kernel(borrows=True)
def keep_right(ox, oy, oz):
    """The preferred velocity o turned a little (KEEP_RIGHT of its length)
    to its right, about +z (about +y when o is along z): agents meeting
    head on, whose ORCA planes would only slow them, veer apart so."""
    ax, ay, az = 0.0, 0.0, 1.0
    if ox * ox + oy * oy <= 1e-6 * (oz * oz):
        ax, ay, az = 0.0, 1.0, 0.0
    rx, ry, rz = oy * az - oz * ay, oz * ax - ox * az, ox * ay - oy * ax
    rl = math.sqrt(rx * rx + ry * ry + rz * rz)
    ol = math.sqrt(ox * ox + oy * oy + oz * oz)
    if rl == 0.0:
        return ox, oy, oz
    f = KEEP_RIGHT * ol / rl
    return ox + f * rx, oy + f * ry, oz + f * rz


@kernel(borrows=True)
def wall_halfspaces(s, w, i, dt, tau_w, skin_rel, wmost, stack, wd, wq, pt, nm):
    """Agent i's wall planes (the first rows of pt/nm), also kept for the
    settle pass in s.wn/s.wgap/s.wcount, and s.top[i]: the longest move
    this step that no wall left out can stop. Returns (planes, top speed)."""
    px, py, pz = s.pos[i, 0], s.pos[i, 1], s.pos[i, 2]
    r, vmax = s.radius[i], s.max_speed[i]
    skin = skin_rel * max(r, 1.0)
    horizon = max(dt, tau_w)
    reach = r + skin + vmax * horizon
    nw, dropped = wall_planes(w.box, w.node, w.tri, w.tbox, w.flat, stack, px, py, pz,
                              reach, wmost, wd, wq)
    top = vmax * horizon
    if dropped < math.inf:
        top = min(top, max(dropped - r - skin, 0.0))
    s.top[i] = top
    m = 0
    for k in range(nw):
        d = wd[k]
        if not d > 0.0:
            continue
        ux, uy, uz = (px - wq[k, 0]) / d, (py - wq[k, 1]) / d, (pz - wq[k, 2]) / d
        gap = d - r - skin
        dup = False
        for j in range(m):
            if abs(nm[j, 0] - ux) + abs(nm[j, 1] - uy) + abs(nm[j, 2] - uz) < 1e-9:
                dup = True
                s.wgap[i, j] = min(s.wgap[i, j], gap)
                break
        if dup:
            continue
        h = tau_w if gap >= 0.0 else dt
        h = max(h, dt)
        nm[m, 0], nm[m, 1], nm[m, 2] = ux, uy, uz
        pt[m, 0], pt[m, 1], pt[m, 2] = -ux * gap / h, -uy * gap / h, -uz * gap / h
        s.wn[i, m, 0], s.wn[i, m, 1], s.wn[i, m, 2] = ux, uy, uz
        s.wgap[i, m] = gap
        m += 1
    s.wcount[i] = m
    return m, min(vmax, top / dt)


@kernel
def plan_chunk(s, w, g, p, i0, i1):
    """Steer and choose the new velocity (s.new_vel) of agents i0 .. i1-1;
    flags into s.flags. ``w``: the wall BVH's arrays; ``g``: the neighbour
    search's rows (:func:`regn.crowd._grid_kernels.build_rows`); ``p``: (dt, time horizon, wall
    horizon, skin, max neighbours, wall planes)."""
    dt, tau, tau_w, skin_rel = p[0], p[1], p[2], p[3]
    most, wmost = int(p[4]), int(p[5])
    m_all = most + wmost
    pt = np.empty((m_all, 3))
    nm = np.empty((m_all, 3))
    ppt = np.empty((m_all, 3))
    pnm = np.empty((m_all, 3))
    res = np.empty(3)
    tmp = np.empty(3)
    keep = np.empty(3)
    nd = np.empty(max(most, 1))
    wd = np.empty(max(wmost, 1))
    wq = np.empty((max(wmost, 1), 3))
    stack = np.empty(2 * w.depth + 8, np.int64)
    for i in range(i0, i1):
        flag = steer(s, w, i, dt, stack)
        px, py, pz = s.pos[i, 0], s.pos[i, 1], s.pos[i, 2]
        vx, vy, vz = s.vel[i, 0], s.vel[i, 1], s.vel[i, 2]
        r = s.radius[i]
        hard, top = wall_halfspaces(s, w, i, dt, tau_w, skin_rel, wmost, stack, wd, wq,
                                    pt, nm)
        m = hard
        nb = s.nbs[i]
        nn = 0
        if most > 0:
            nn = row_neighbours(i, s.pos, s.reach[i], g, most, nb, nd)
        s.ncount[i] = nn
        for k in range(nn):
            o = nb[k]
            share = s.priority[o] / (s.priority[i] + s.priority[o])
            orca_plane(px, py, pz, vx, vy, vz, s.pos[o, 0], s.pos[o, 1], s.pos[o, 2],
                       s.vel[o, 0], s.vel[o, 1], s.vel[o, 2], r + s.radius[o], share,
                       1.0 / tau, 1.0 / dt, pt, nm, m)
            m += 1
        ox, oy, oz = s.pref[i, 0], s.pref[i, 1], s.pref[i, 2]
        if nn > 0:
            ox, oy, oz = keep_right(ox, oy, oz)
        ok = solve(pt, nm, m, hard, top, ox, oy, oz, res, ppt, pnm, tmp, keep)
        if not ok:
            flag |= WALLED
            res[0] = res[1] = res[2] = 0.0
        s.new_vel[i, 0], s.new_vel[i, 1], s.new_vel[i, 2] = res[0], res[1], res[2]
        s.flags[i] = flag


@kernel(borrows=True)
def _at_arrived_mate(s, final, i):
    """Does agent i (flying down a field with a group) touch, within
    GATHER of their radii's sum, a neighbour of its group that had arrived
    before this step, at the new positions ``final``? (A group gathers
    round its goal so.)"""
    for k in range(s.ncount[i]):
        o = s.nbs[i, k]
        if s.field[o] != s.field[i] or s.prev_status[o] != ARRIVED:
            continue
        dx, dy, dz = final[i, 0] - final[o, 0], final[i, 1] - final[o, 1], \
            final[i, 2] - final[o, 2]
        rr = GATHER * (s.radius[i] + s.radius[o])
        if dx * dx + dy * dy + dz * dz <= rr * rr:
            return True
    return False


@kernel
def move_chunk(s, final, dt, step, stuck_time, arrive_rel, i0, i1):
    """Move agents i0 .. i1-1 to their settled positions ``final``; update
    status, arrival step and progress (a moving agent that has not come
    closer to its goal along its corridor by a tenth of its radius for
    ``stuck_time`` seconds is STUCK until it does)."""
    for i in range(i0, i1):
        for c in range(3):
            s.vel[i, c] = (final[i, c] - s.pos[i, c]) / dt
            s.pos[i, c] = final[i, c]
        st = s.status[i]
        if st == IDLE or st == NO_PATH:
            continue
        px, py, pz = s.pos[i, 0], s.pos[i, 1], s.pos[i, 2]
        gx, gy, gz = s.goal[i, 0], s.goal[i, 1], s.goal[i, 2]
        dg = math.sqrt((gx - px) ** 2 + (gy - py) ** 2 + (gz - pz) ** 2)
        r = s.radius[i]
        if dg <= arrive_rel * r or (s.field[i] >= 0 and _at_arrived_mate(s, final, i)):
            if s.arrived_step[i] < 0:
                s.arrived_step[i] = step
            s.status[i] = ARRIVED
            s.idle_time[i] = 0.0
            continue
        if st == ARRIVED:
            s.status[i] = MOVING          # pushed off its goal: it flies back
        left = dg
        c1 = s.cstart[i + 1]
        k = s.corner[i]
        if k < c1 and k >= s.cstart[i]:
            q = s.cpts
            left = math.sqrt((q[k, 0] - px) ** 2 + (q[k, 1] - py) ** 2
                             + (q[k, 2] - pz) ** 2) + s.ctail[k]
        if left < s.best_left[i] - 0.1 * r:
            s.best_left[i] = left
            s.idle_time[i] = 0.0
            if s.status[i] == STUCK:
                s.status[i] = MOVING
        else:
            s.idle_time[i] += dt
            if s.idle_time[i] > stuck_time:
                s.status[i] = STUCK
