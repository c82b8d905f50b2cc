"""Compiled ORCA: each neighbour's velocity obstacle as a half-space of
velocities, and the small 3D linear program that picks the velocity nearest
the preferred one inside all of them and inside the ball of the agent's top
speed (:mod:`regn.crowd`).

A half-space is a plane (a point ``pt[k]`` and a unit normal ``nm[k]``); a
velocity v is allowed when ``nm[k] . (v - pt[k]) >= 0``. The first ``hard``
planes are the walls' (:mod:`regn.crowd._step_kernels`): they are never
relaxed. The solver is the incremental randomised-order-free LP of ORCA
(van den Berg, Guy, Lin and Manocha, "Reciprocal n-body collision
avoidance", 2011), in the form RVO2-3D uses: ``lp3`` adds one plane at a
time, re-solving on that plane (``lp2``) and on the line where it meets an
earlier one (``lp1``) when the current answer violates it; when the planes
leave no velocity, ``lp4`` minimises the largest violation of the soft
planes, one plane at a time, keeping the hard ones. Plain float64
arithmetic throughout, in a fixed order: the same inputs give the same
velocity bit for bit.
"""

from __future__ import annotations

import math

from .._jit import kernel

#: below this, two unit normals are parallel (a squared cross product), a
#: direction has no length, a line is parallel to a plane
EPS = 1e-12


@kernel(borrows=True)
def _dot(pt, k, x, y, z):
    return pt[k, 0] * x + pt[k, 1] * y + pt[k, 2] * z


@kernel(borrows=True)
def lp1(pt, nm, plane, lpx, lpy, lpz, ldx, ldy, ldz, radius, ox, oy, oz, direction, res):
    """On the line lp + t ld (ld a unit vector), the point of the ball of
    ``radius`` satisfying planes 0 .. plane-1 that is nearest o (or, with
    ``direction``, farthest along o); written into res[0:3]. False (res
    untouched) when none exists."""
    dotp = lpx * ldx + lpy * ldy + lpz * ldz
    disc = dotp * dotp + radius * radius - (lpx * lpx + lpy * lpy + lpz * lpz)
    if disc < 0.0:
        return False
    sq = math.sqrt(disc)
    t_lo = -dotp - sq
    t_hi = -dotp + sq
    for k in range(plane):
        num = ((pt[k, 0] - lpx) * nm[k, 0] + (pt[k, 1] - lpy) * nm[k, 1]
               + (pt[k, 2] - lpz) * nm[k, 2])
        den = ldx * nm[k, 0] + ldy * nm[k, 1] + ldz * nm[k, 2]
        if den * den <= EPS:
            if num > 0.0:
                return False
            continue
        t = num / den
        if den >= 0.0:
            t_lo = max(t_lo, t)
        else:
            t_hi = min(t_hi, t)
        if t_lo > t_hi:
            return False
    if direction:
        t = t_hi if ox * ldx + oy * ldy + oz * ldz > 0.0 else t_lo
    else:
        t = ldx * (ox - lpx) + ldy * (oy - lpy) + ldz * (oz - lpz)
        t = min(max(t, t_lo), t_hi)
    res[0] = lpx + t * ldx
    res[1] = lpy + t * ldy
    res[2] = lpz + t * ldz
    return True


@kernel(borrows=True)
def lp2(pt, nm, plane, radius, ox, oy, oz, direction, res):
    """On plane ``plane``, inside the ball of ``radius``, the point
    satisfying planes 0 .. plane-1 nearest o (farthest along o with
    ``direction``), into res. False when none exists (res then holds a
    partial answer the caller discards)."""
    nx, ny, nz = nm[plane, 0], nm[plane, 1], nm[plane, 2]
    dist = _dot(pt, plane, nx, ny, nz)
    if dist * dist > radius * radius:
        return False
    pr2 = radius * radius - dist * dist
    cx, cy, cz = dist * nx, dist * ny, dist * nz
    if direction:
        d = ox * nx + oy * ny + oz * nz
        px, py, pz = ox - d * nx, oy - d * ny, oz - d * nz
        l2 = px * px + py * py + pz * pz
        if l2 <= EPS:
            res[0], res[1], res[2] = cx, cy, cz
        else:
            s = math.sqrt(pr2 / l2)
            res[0], res[1], res[2] = cx + s * px, cy + s * py, cz + s * pz
    else:
        d = (pt[plane, 0] - ox) * nx + (pt[plane, 1] - oy) * ny + (pt[plane, 2] - oz) * nz
        rx, ry, rz = ox + d * nx, oy + d * ny, oz + d * nz
        if rx * rx + ry * ry + rz * rz > radius * radius:
            qx, qy, qz = rx - cx, ry - cy, rz - cz
            l2 = qx * qx + qy * qy + qz * qz
            s = math.sqrt(pr2 / l2) if l2 > 0.0 else 0.0
            rx, ry, rz = cx + s * qx, cy + s * qy, cz + s * qz
        res[0], res[1], res[2] = rx, ry, rz
    for k in range(plane):
        if (nm[k, 0] * (pt[k, 0] - res[0]) + nm[k, 1] * (pt[k, 1] - res[1])
                + nm[k, 2] * (pt[k, 2] - res[2])) > 0.0:
            # the line where plane k meets this plane
            ux = nm[k, 1] * nz - nm[k, 2] * ny
            uy = nm[k, 2] * nx - nm[k, 0] * nz
            uz = nm[k, 0] * ny - nm[k, 1] * nx
            u2 = ux * ux + uy * uy + uz * uz
            if u2 <= EPS:
                return False
            ul = math.sqrt(u2)
            ux, uy, uz = ux / ul, uy / ul, uz / ul
            # in this plane, perpendicular to the line
            wx, wy, wz = uy * nz - uz * ny, uz * nx - ux * nz, ux * ny - uy * nx
            s = (((pt[k, 0] - pt[plane, 0]) * nm[k, 0] + (pt[k, 1] - pt[plane, 1]) * nm[k, 1]
                  + (pt[k, 2] - pt[plane, 2]) * nm[k, 2])
                 / (wx * nm[k, 0] + wy * nm[k, 1] + wz * nm[k, 2]))
            if not lp1(pt, nm, k, pt[plane, 0] + s * wx, pt[plane, 1] + s * wy,
                       pt[plane, 2] + s * wz, ux, uy, uz, radius, ox, oy, oz, direction, res):
                return False
    return True


@kernel(borrows=True)
def lp3(pt, nm, m, radius, ox, oy, oz, direction, res, tmp):
    """The velocity inside the ball of ``radius`` and planes 0 .. m-1
    nearest o (farthest along unit o with ``direction``), into res. Returns
    m on success, else the first plane that could not be met (res then
    holds the answer for the planes before it). ``tmp``: (3,) scratch."""
    if direction:
        res[0], res[1], res[2] = ox * radius, oy * radius, oz * radius
    else:
        o2 = ox * ox + oy * oy + oz * oz
        if o2 > radius * radius:
            s = radius / math.sqrt(o2)
            res[0], res[1], res[2] = ox * s, oy * s, oz * s
        else:
            res[0], res[1], res[2] = ox, oy, oz
    for k in range(m):
        if (nm[k, 0] * (pt[k, 0] - res[0]) + nm[k, 1] * (pt[k, 1] - res[1])
                + nm[k, 2] * (pt[k, 2] - res[2])) > 0.0:
            tmp[0], tmp[1], tmp[2] = res[0], res[1], res[2]
            if not lp2(pt, nm, k, radius, ox, oy, oz, direction, res):
                res[0], res[1], res[2] = tmp[0], tmp[1], tmp[2]
                return k
    return m


@kernel(borrows=True)
def lp4(pt, nm, m, hard, first, radius, res, ppt, pnm, tmp, keep):
    """No velocity meets every plane: starting at plane ``first`` (the one
    ``lp3`` failed on), find the velocity in the ball of ``radius`` that
    keeps the hard planes 0 .. hard-1 and minimises the largest violation
    of the soft ones, into res (which holds lp3's partial answer on entry).
    For each soft plane still violated by more than the best violation so
    far, the planes before it are projected onto it (each becomes the plane
    of equal violation of the two) and the LP is solved in the direction
    of its normal. ``ppt``/``pnm``: (M,3) scratch; ``tmp``, ``keep``: (3,)."""
    worst = 0.0
    for i in range(max(first, hard), m):
        nx, ny, nz = nm[i, 0], nm[i, 1], nm[i, 2]
        if nx * (pt[i, 0] - res[0]) + ny * (pt[i, 1] - res[1]) + nz * (pt[i, 2] - res[2]) \
                <= worst:
            continue
        q = 0
        for j in range(i):
            if j < hard:                       # walls: kept as they are
                for c in range(3):
                    ppt[q, c] = pt[j, c]
                    pnm[q, c] = nm[j, c]
                q += 1
                continue
            cx = nm[j, 1] * nz - nm[j, 2] * ny
            cy = nm[j, 2] * nx - nm[j, 0] * nz
            cz = nm[j, 0] * ny - nm[j, 1] * nx
            if cx * cx + cy * cy + cz * cz <= EPS:
                if nm[j, 0] * nx + nm[j, 1] * ny + nm[j, 2] * nz > 0.0:
                    continue                   # parallel, same way: implied
                for c in range(3):
                    ppt[q, c] = 0.5 * (pt[i, c] + pt[j, c])
            else:
                # the line where j meets i, in plane i
                wx, wy, wz = cy * nz - cz * ny, cz * nx - cx * nz, cx * ny - cy * nx
                s = (((pt[j, 0] - pt[i, 0]) * nm[j, 0] + (pt[j, 1] - pt[i, 1]) * nm[j, 1]
                      + (pt[j, 2] - pt[i, 2]) * nm[j, 2])
                     / (wx * nm[j, 0] + wy * nm[j, 1] + wz * nm[j, 2]))
                ppt[q, 0] = pt[i, 0] + s * wx
                ppt[q, 1] = pt[i, 1] + s * wy
                ppt[q, 2] = pt[i, 2] + s * wz
            dx, dy, dz = nm[j, 0] - nx, nm[j, 1] - ny, nm[j, 2] - nz
            dl = math.sqrt(dx * dx + dy * dy + dz * dz)
            pnm[q, 0], pnm[q, 1], pnm[q, 2] = dx / dl, dy / dl, dz / dl
            q += 1
        keep[0], keep[1], keep[2] = res[0], res[1], res[2]
        if lp3(ppt, pnm, q, radius, nx, ny, nz, True, res, tmp) < q:
            res[0], res[1], res[2] = keep[0], keep[1], keep[2]
        worst = nx * (pt[i, 0] - res[0]) + ny * (pt[i, 1] - res[1]) + nz * (pt[i, 2] - res[2])


@kernel(borrows=True)
def solve(pt, nm, m, hard, radius, ox, oy, oz, res, ppt, pnm, tmp, keep):
    """The velocity for preferred velocity o under planes 0 .. m-1 (the first
    ``hard`` never relaxed), at most ``radius`` long, into res; returns
    False when even the hard planes leave no velocity (res is then the
    velocity that meets the most of them in order, the caller's fallback)."""
    fail = lp3(pt, nm, m, radius, ox, oy, oz, False, res, tmp)
    if fail < m:
        if fail < hard:
            return False
        lp4(pt, nm, m, hard, fail, radius, res, ppt, pnm, tmp, keep)
    return True


@kernel(borrows=True)
def orca_plane(px, py, pz, vx, vy, vz, qx, qy, qz, wx, wy, wz, rr, share, inv_tau, inv_dt,
               pt, nm, k):
    """Plane k: the half-space of this agent's velocities (at p, moving v)
    that avoids the neighbour (at q, moving w) for the time horizon 1/inv_tau
    with combined radius rr, taking ``share`` (0.5: half) of the change
    (the ORCA construction: the velocity obstacle is a cone cut by a sphere;
    the relative velocity's nearest point on its boundary gives the normal).
    When the two already overlap, they separate within the step 1/inv_dt."""
    rpx, rpy, rpz = qx - px, qy - py, qz - pz
    rvx, rvy, rvz = vx - wx, vy - wy, vz - wz
    d2 = rpx * rpx + rpy * rpy + rpz * rpz
    rr2 = rr * rr
    if d2 > rr2:
        ux, uy, uz = rvx - inv_tau * rpx, rvy - inv_tau * rpy, rvz - inv_tau * rpz
        u2 = ux * ux + uy * uy + uz * uz
        dotp = ux * rpx + uy * rpy + uz * rpz
        if dotp < 0.0 and dotp * dotp > rr2 * u2:
            ul = math.sqrt(u2)                 # nearest the cut-off sphere
            ux, uy, uz = ux / ul, uy / ul, uz / ul
            g = rr * inv_tau - ul
        else:                                  # nearest the cone's side
            a = d2
            b = rpx * rvx + rpy * rvy + rpz * rvz
            cx = rpy * rvz - rpz * rvy
            cy = rpz * rvx - rpx * rvz
            cz = rpx * rvy - rpy * rvx
            c = (rvx * rvx + rvy * rvy + rvz * rvz) - (cx * cx + cy * cy + cz * cz) / (d2 - rr2)
            t = (b + math.sqrt(max(b * b - a * c, 0.0))) / a
            ux, uy, uz = rvx - t * rpx, rvy - t * rpy, rvz - t * rpz
            ul = math.sqrt(ux * ux + uy * uy + uz * uz)
            if ul > 0.0:
                ux, uy, uz = ux / ul, uy / ul, uz / ul
            else:                              # on the cone's axis
                ux, uy, uz = -rpx / math.sqrt(d2), -rpy / math.sqrt(d2), -rpz / math.sqrt(d2)
            g = rr * t - ul
    else:
        ux, uy, uz = rvx - inv_dt * rpx, rvy - inv_dt * rpy, rvz - inv_dt * rpz
        ul = math.sqrt(ux * ux + uy * uy + uz * uz)
        if ul > 0.0:
            ux, uy, uz = ux / ul, uy / ul, uz / ul
        elif d2 > 0.0:
            ux, uy, uz = -rpx / math.sqrt(d2), -rpy / math.sqrt(d2), -rpz / math.sqrt(d2)
        else:
            ux, uy, uz = 1.0, 0.0, 0.0         # the same centre: any fixed way
        g = rr * inv_dt - ul
    nm[k, 0], nm[k, 1], nm[k, 2] = ux, uy, uz
    pt[k, 0] = vx + share * g * ux
    pt[k, 1] = vy + share * g * uy
    pt[k, 2] = vz + share * g * uz
