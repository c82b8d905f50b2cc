"""Segment walks: raycast (one segment, full report) and line_of_sight
(many segments at once, every ray stepping together with numpy).

The walk starts in the tetrahedron holding ``a`` (:func:`locate`). In
tetrahedron t the barycentric coordinates along the segment are linear in
the fraction s; the segment leaves t where the first decreasing coordinate
reaches 0, through the face opposite that vertex. If ``b`` lies in t the
segment is clear; if the exit face is a boundary face the ray hits a wall
there. The walk never returns to the tetrahedron it just left and is capped
at ``T + 8`` steps, so it always terminates.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import QueryError

from . import as_point, as_points
from .locate import BARY_TOL, _prep, bary, locate


@dataclass
class RaycastHit:
    """Result of :func:`raycast`. ``status``: 'clear', 'hit', 'start_outside',
    'lost' (walk cap reached or degenerate geometry)."""
    clear: bool
    status: str
    face: int = -1
    point: np.ndarray = field(default_factory=lambda: np.full(3, np.nan))
    t: float = float("nan")
    normal: np.ndarray = field(default_factory=lambda: np.full(3, np.nan))
    tets: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    def to_dict(self) -> dict:
        return {"clear": self.clear, "status": self.status, "face": self.face,
                "point": self.point.tolist(), "t": self.t,
                "normal": self.normal.tolist(), "tets": self.tets.tolist()}


def _exit(d, t, a, b, s_cur):
    """Vectorised: (K,) tets, segment ends -> (exit fraction, exit vertex slot,
    b inside flag)."""
    la = bary(d, t, a)
    lb = bary(d, t, b)
    inside_b = lb.min(axis=1) >= -BARY_TOL
    dl = lb - la
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(dl < 0, -la / dl, np.inf)
    s = np.where(np.isnan(s), np.inf, s)
    s = np.maximum(s, s_cur[:, None])
    j = np.argmin(s, axis=1)
    return s[np.arange(len(t)), j], j, inside_b


def raycast(mesh, a, b) -> RaycastHit:
    """Walk the segment a -> b tetrahedron to tetrahedron."""
    a = as_point(a, "a")
    b = as_point(b, "b")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        return RaycastHit(False, "start_outside" if not np.all(np.isfinite(a)) else "lost")
    t = int(locate(mesh, a[None])[0])
    if t < 0:
        return RaycastHit(False, "start_outside")
    d = _prep(mesh)
    nbv = d["nbv"]
    opp = np.asarray(mesh.opposite_slot)
    tf = np.asarray(mesh.tet_faces)
    crossed = [t]
    prev = -1
    s_cur = 0.0
    for _ in range(d["T"] + 8):
        s, j, inb = _exit(d, np.array([t]), a[None], b[None], np.array([s_cur]))
        if inb[0]:
            return RaycastHit(True, "clear", -1, b.copy(), 1.0, np.full(3, np.nan),
                              np.array(crossed))
        s_cur = float(min(s[0], 1.0))
        j = int(j[0])
        nxt = int(nbv[t, j])
        if nxt == prev and nxt >= 0:
            # tie at an edge: take the other decreasing coordinate
            la, lb = bary(d, np.array([t]), a[None])[0], bary(d, np.array([t]), b[None])[0]
            dl = lb - la
            alt = [k for k in range(4) if k != j and dl[k] < 0 and nbv[t, k] != prev]
            if not alt:
                break
            j = alt[0]
            nxt = int(nbv[t, j])
        if nxt < 0:
            match = np.flatnonzero(opp[t] == j)
            if not len(match):
                raise QueryError(
                    f"tetrahedron {t}: no face slot leaves out vertex slot {j} (its face "
                    "planes are inconsistent; `regn verify` names the broken faces)")
            slot = int(match[0])
            f = int(tf[t, slot])
            n = np.asarray(mesh.face_normals[f], dtype=np.float64).copy()
            c = np.asarray(mesh.face_centroids[f]) - np.asarray(mesh.tet_points[t]).mean(0)
            if np.dot(n, c) < 0:
                n = -n
            return RaycastHit(False, "hit", f, a + s_cur * (b - a), s_cur, n,
                              np.array(crossed))
        prev, t = t, nxt
        crossed.append(t)
    return RaycastHit(False, "lost", tets=np.array(crossed))


def line_of_sight(mesh, a, b) -> np.ndarray:
    """(N,3),(N,3) -> (N,) bool: the segment stays inside the volume."""
    from ..errors import QueryError
    a = as_points(a, "a")
    b = as_points(b, "b")
    if a.shape != b.shape:
        raise QueryError(f"a and b must have the same shape, got {a.shape} and {b.shape}")
    n = len(a)
    out = np.zeros(n, dtype=bool)
    if n == 0:
        return out
    cur = locate(mesh, a)
    okb = np.all(np.isfinite(b), axis=1)
    act = np.flatnonzero((cur >= 0) & okb)
    d = _prep(mesh)
    nbv = d["nbv"]
    s_cur = np.zeros(n)
    prev = np.full(n, -1, dtype=np.int64)
    for _ in range(d["T"] + 8):
        if not len(act):
            break
        t = cur[act]
        s, j, inb = _exit(d, t, a[act], b[act], s_cur[act])
        out[act[inb]] = True
        keep = ~inb
        act, t, s, j = act[keep], t[keep], s[keep], j[keep]
        nxt = nbv[t, j]
        back = (nxt == prev[act]) & (nxt >= 0)
        if np.any(back):   # edge tie: the next decreasing coordinate instead
            bi = np.flatnonzero(back)
            la = bary(d, t[bi], a[act[bi]])
            lb = bary(d, t[bi], b[act[bi]])
            dl = lb - la
            bad = (dl >= 0) | (nbv[t[bi]] == prev[act[bi]][:, None])
            bad[np.arange(len(bi)), j[bi]] = True
            with np.errstate(divide="ignore", invalid="ignore"):
                ss = np.where(bad, np.inf, -la / dl)
            jj = np.argmin(ss, axis=1)
            fin = np.isfinite(ss[np.arange(len(bi)), jj])
            nxt[bi] = np.where(fin, nbv[t[bi], jj], -1)
        go = (nxt >= 0) & (s <= 1.0 + 1e-12)
        act, t, nxt, s = act[go], t[go], nxt[go], s[go]
        prev[act] = t
        cur[act] = nxt
        s_cur[act] = s
    return out
