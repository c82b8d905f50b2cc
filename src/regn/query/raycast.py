"""Segment walks: raycast (one segment, full report) and line_of_sight
(many segments, one compiled call).

The walk starts in the tetrahedron holding ``a`` (:func:`locate`). In
tetrahedron t the barycentric coordinates along the segment are linear in
the fraction s; the segment leaves t where the first decreasing coordinate
reaches 0, through the face opposite that vertex. If ``b`` lies in t (every
coordinate >= -BARY_TOL) the segment is clear; if the exit face is a
boundary face the ray hits a wall there. The walk never returns to the
tetrahedron it just left (at an edge tie it takes another decreasing
coordinate) and is capped at ``T + 8`` steps, so it always terminates;
NaN / inf input ends it at once.

Both queries run one kernel, :func:`_walk_segment`, compiled with numba when
it is importable (lazy import, ``cache=True``); without numba the same code
runs as plain Python over flat lists (same answers, slower). Both follow
the same rules, so ``line_of_sight(a, b) == raycast(a, b).clear``. Work is
O(segments x tetrahedra crossed), with O(N) memory; line_of_sight loops
over its segments inside the kernel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import QueryError

from . import as_point, as_points, scratch
from ._prefetch import numba_prefetch, prefetch
from .locate import BARY_TOL, _prep, locate, locate_few


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


# walk outcomes
CLEAR = 0        # b lies in the last tetrahedron
HIT = 1          # the exit face is a boundary face
LOST = 2         # step cap reached
STUCK = 3        # edge tie with no other way out
BEYOND = 4       # the exit lies past b, yet b failed the inside test (rounding)
OUT_OF_RANGE = 5  # a neighbour index outside [0, T) (never from a sound Mesh)


def _walk_segment(W, nbv, n_tets, ax, ay, az, bx, by, bz, t, cap, tol, crossed):
    """Walk a -> b from tetrahedron t. ``W``: the (T*12,) flattened affine
    rows of :func:`regn.query.locate.bary` (row r of tet t at 12*t + 4*r);
    ``nbv``: (T*4,) the neighbour across the face opposite vertex slot k at
    4*t + k. The arithmetic is :func:`regn.query.locate.bary`'s, operation
    for operation, so the answers are bit-identical to a numpy walk (the
    tests keep one as their reference).

    Returns (outcome, tet, exit vertex slot, fraction, tets crossed). The
    crossed tetrahedra are written to ``crossed`` while it has room (the
    count keeps going, so a caller with a short buffer can retry).

    At an edge tie (the exit leads back into the tet just left) it takes,
    among the other decreasing coordinates, the one that reaches 0 first:
    that is where the segment really leaves t. It stops (BEYOND, not clear)
    when the exit fraction exceeds 1 + 1e-12: b should then have been inside
    t, and only rounding can have said otherwise, so the walk does not guess.
    raycast and line_of_sight run this same walk, so ``line_of_sight(a, b)``
    is always ``raycast(a, b).clear``."""
    prev = -1
    s_cur = 0.0
    if crossed.shape[0] > 0:
        crossed[0] = t
    n = 1
    for _ in range(cap):
        o = 12 * t
        if _PREFETCH:
            # the next tet is one of t's neighbours: start loading their
            # rows now, so the walk does not wait on a cache miss every step
            # (~115 -> ~70 ns a step on the benchmark map)
            for k in range(4):
                u = nbv[4 * t + k]
                if u >= 0 and u < n_tets:
                    prefetch(W, 12 * u)
                    prefetch(W, 12 * u + 11)
                    prefetch(nbv, 4 * u)
        # barycentric coordinates of a and b: ((w0 x + w1 y) + w2 z) + w3,
        # l0 = 1 - ((l1 + l2) + l3), as numpy evaluates them
        la1 = W[o] * ax + W[o + 1] * ay + W[o + 2] * az + W[o + 3]
        la2 = W[o + 4] * ax + W[o + 5] * ay + W[o + 6] * az + W[o + 7]
        la3 = W[o + 8] * ax + W[o + 9] * ay + W[o + 10] * az + W[o + 11]
        lb1 = W[o] * bx + W[o + 1] * by + W[o + 2] * bz + W[o + 3]
        lb2 = W[o + 4] * bx + W[o + 5] * by + W[o + 6] * bz + W[o + 7]
        lb3 = W[o + 8] * bx + W[o + 9] * by + W[o + 10] * bz + W[o + 11]
        la0 = 1.0 - (la1 + la2 + la3)
        lb0 = 1.0 - (lb1 + lb2 + lb3)
        if lb0 >= -tol and lb1 >= -tol and lb2 >= -tol and lb3 >= -tol:   # NaN fails
            return CLEAR, t, -1, s_cur, n
        d0 = lb0 - la0
        d1 = lb1 - la1
        d2 = lb2 - la2
        d3 = lb3 - la3
        # exit: the first decreasing coordinate to reach 0, not before s_cur
        # (first slot on ties; NaN counts as never)
        j = 0
        sj = _crossing(la0, d0, s_cur)
        s = _crossing(la1, d1, s_cur)
        if s < sj:
            j, sj = 1, s
        s = _crossing(la2, d2, s_cur)
        if s < sj:
            j, sj = 2, s
        s = _crossing(la3, d3, s_cur)
        if s < sj:
            j, sj = 3, s
        nxt = nbv[4 * t + j]
        if nxt == prev and nxt >= 0:
            # edge tie: never step back into the tet just left
            j = _tie_exit(nbv, t, prev, j, la0, la1, la2, la3, d0, d1, d2, d3)
            if j < 0:
                return STUCK, t, -1, s_cur, n
            nxt = nbv[4 * t + j]
        if not sj <= 1.0 + 1e-12:        # (a wall past b is no hit either)
            return BEYOND, t, j, s_cur, n
        s_cur = sj
        if nxt < 0:
            return HIT, t, j, s_cur, n
        if nxt >= n_tets:
            return OUT_OF_RANGE, t, j, s_cur, n
        prev = t
        t = nxt
        if n < crossed.shape[0]:
            crossed[n] = t
        n += 1
    return LOST, t, -1, s_cur, n


def _crossing(l, dl, s_cur):
    """Fraction where the coordinate l + s * dl reaches 0 when decreasing
    (inf otherwise, and for NaN), raised to s_cur: numpy's
    ``maximum(nan_to_inf(where(dl < 0, -l / dl, inf)), s_cur)``."""
    if dl < 0:
        s = -l / dl
        if s != s:
            s = math.inf
    else:
        s = math.inf
    return s if s > s_cur else s_cur


def _tie_exit(nbv, t, prev, j, la0, la1, la2, la3, d0, d1, d2, d3):
    """The edge tie's way out: among the other decreasing coordinates not
    leading back to prev, the vertex slot whose crossing -l/dl is smallest
    (first on ties); -1 when none is finite."""
    best = math.inf
    bk = -1
    for k in range(4):
        if k == 0:
            l, dl = la0, d0
        elif k == 1:
            l, dl = la1, d1
        elif k == 2:
            l, dl = la2, d2
        else:
            l, dl = la3, d3
        if k == j or dl >= 0 or nbv[4 * t + k] == prev:
            continue
        s = -l / dl
        if s != s:
            return -1             # NaN geometry: no trustworthy way out
        if bk < 0 or s < best:
            best, bk = s, k
    if bk < 0 or not math.isfinite(best):
        return -1
    return bk


def _walk_batch(W, nbv, n_tets, a, b, start, cap, tol, outcome, last, slot, frac):
    """Every segment's walk: outcome[i] (CLEAR, HIT, ... ; -1 for a start
    outside the volume or a non-finite b, never walked), the last tet, the
    exit vertex slot and the fraction reached. One call for all segments."""
    no_record = np.zeros(0, dtype=np.int64)
    for i in range(len(outcome)):
        t = start[i]
        bx, by, bz = b[i][0], b[i][1], b[i][2]
        if t < 0 or not (math.isfinite(bx) and math.isfinite(by) and math.isfinite(bz)):
            outcome[i] = -1
            continue
        o, tl, j, s, _ = _walk_segment(W, nbv, n_tets, a[i][0], a[i][1], a[i][2], bx, by, bz,
                                       t, cap, tol, no_record)
        outcome[i] = o
        last[i] = tl
        slot[i] = j
        frac[i] = s


_KERNELS = {}
_PREFETCH = False        # no prefetch hints in the plain-Python run (no-ops there)


def _kernels():
    """{'walk': one segment, 'batch': all segments, 'compiled': bool}:
    numba-compiled on first use, else the same functions as Python."""
    if not _KERNELS:
        try:
            import numba
            jit = numba.njit(cache=True, nogil=True)
            g = globals()
            g["prefetch"] = numba_prefetch()
            g["_PREFETCH"] = True          # a compile-time constant to numba
            # helpers compiled first and rebound, so the callers compiled
            # after them call the compiled versions
            for name in ("_crossing", "_tie_exit", "_walk_segment"):
                g[name] = jit(g[name])
            _KERNELS.update(walk=g["_walk_segment"], batch=jit(_walk_batch), compiled=True)
        except Exception:          # numba missing or broken: plain Python
            _KERNELS.update(walk=_walk_segment, batch=_walk_batch, compiled=False)
    return _KERNELS


def _walk_arrays(mesh, d, compiled):
    """The kernel's flat W and nbv (cached): array views when compiled;
    Python lists for the plain-Python run (list items are Python floats and
    ints, several times faster there than numpy scalars; same values)."""
    key = "walk_flat" if compiled else "walk_lists"
    s = scratch(mesh)
    if key not in s:
        W, nbv = d["W"].reshape(-1), d["nbv"].reshape(-1)
        s[key] = (W, nbv) if compiled else (W.tolist(), nbv.tolist())
    return s[key]


_NAN3 = (math.nan,) * 3
#: raycast's first crossed-tets buffer (a longer walk is rerun with room)
_CROSSED_START = 256


def raycast(mesh, a, b) -> RaycastHit:
    """Walk the segment a -> b tetrahedron to tetrahedron."""
    a = as_point(a, "a")
    b = as_point(b, "b")
    ax, ay, az = a.tolist()
    bx, by, bz = b.tolist()
    if not (math.isfinite(ax) and math.isfinite(ay) and math.isfinite(az)):
        return RaycastHit(False, "start_outside")
    if not (math.isfinite(bx) and math.isfinite(by) and math.isfinite(bz)):
        return RaycastHit(False, "lost")
    t0 = int(locate_few(mesh, a[None])[0])
    if t0 < 0:
        return RaycastHit(False, "start_outside")
    d = _prep(mesh)
    k = _kernels()
    W, nbv = _walk_arrays(mesh, d, k["compiled"])
    T = d["T"]
    crossed = np.empty(min(_CROSSED_START, T + 9), dtype=np.int64)
    while True:
        outcome, t, j, s, n = k["walk"](W, nbv, T, ax, ay, az, bx, by, bz, t0, T + 8,
                                        BARY_TOL, crossed)
        if n <= len(crossed):
            break
        crossed = np.empty(n, dtype=np.int64)      # long walk: again, recording all
    tets = crossed[:n].copy()
    if outcome == CLEAR:
        return RaycastHit(True, "clear", -1, b.copy(), 1.0, np.array(_NAN3), tets)
    if outcome != HIT:
        return RaycastHit(False, "lost", tets=tets)
    s = min(float(s), 1.0)
    f, normal = _hit_faces(mesh, np.array([t]), np.array([j]))
    return RaycastHit(False, "hit", int(f[0]), a + s * (b - a), s, normal[0], tets)


def _hit_faces(mesh, t, j):
    """The faces (K,) and outward normals (K,3) where walks ending in tets t
    left through the face opposite vertex slot j; QueryError for a tet whose
    face planes leave that vertex out of none of its faces."""
    exit_face, exit_normal = _exits(mesh)
    f = exit_face[t, j]
    if np.any(f < 0):
        k = int(np.flatnonzero(f < 0)[0])
        raise QueryError(
            f"tetrahedron {int(t[k])}: no face slot leaves out vertex slot {int(j[k])} (its "
            "face planes are inconsistent; `regn verify` names the broken faces)")
    return f, exit_normal[t, j]


def _exits(mesh):
    """(T,4) the face that leaves tetrahedron t opposite its vertex slot j (-1
    when no face slot leaves that vertex out: inconsistent planes), and (T,4,3)
    its unit normal pointing out of t; built once per mesh, so a hit costs two
    lookups."""
    s = scratch(mesh)
    if "exits" not in s:
        opp = np.asarray(mesh.opposite_slot)                     # (T,4) slot -> vertex
        tf = np.asarray(mesh.tet_faces)
        T = len(tf)
        exit_face = np.full((T, 4), -1, dtype=np.int64)
        # the first face slot leaving out each vertex (reverse order: first wins)
        for k in (3, 2, 1, 0):
            exit_face[np.arange(T), opp[:, k]] = tf[:, k]
        f = np.maximum(exit_face, 0)
        normal = np.asarray(mesh.face_normals, dtype=np.float64)[f]          # (T,4,3)
        out = (np.asarray(mesh.face_centroids, dtype=np.float64)[f]
               - np.asarray(mesh.tet_points, dtype=np.float64).mean(axis=1)[:, None])
        flip = np.einsum("tjd,tjd->tj", normal, out) < 0
        normal = np.where(flip[..., None], -normal, normal)
        normal[exit_face < 0] = np.nan
        s["exits"] = (exit_face, normal)
    return s["exits"]


def _walk_all(mesh, a, b):
    """(outcome, last tet, exit slot, fraction) arrays of every segment a[i]
    -> b[i], validated (N,3) inputs; see :func:`_walk_batch`."""
    n = len(a)
    outcome = np.full(n, -1, dtype=np.int64)
    last = np.full(n, -1, dtype=np.int64)
    slot = np.full(n, -1, dtype=np.int64)
    frac = np.full(n, np.nan)
    if n == 0:
        return outcome, last, slot, frac
    d = _prep(mesh)
    k = _kernels()
    W, nbv = _walk_arrays(mesh, d, k["compiled"])
    T = d["T"]
    start = locate(mesh, a)
    if k["compiled"]:
        k["batch"](W, nbv, T, np.ascontiguousarray(a), np.ascontiguousarray(b), start, T + 8,
                   BARY_TOL, outcome, last, slot, frac)
    else:
        # Python: lists index faster than arrays (same float values)
        res = [[-1] * n, [-1] * n, [-1] * n, [math.nan] * n]
        _walk_batch(W, nbv, T, a.tolist(), b.tolist(), start.tolist(), T + 8, BARY_TOL, *res)
        outcome[:], last[:], slot[:], frac[:] = res
    return outcome, last, slot, frac


def line_of_sight(mesh, a, b) -> np.ndarray:
    """(N,3),(N,3) -> (N,) bool: the segment stays inside the volume."""
    a, b = _segment_pairs(a, b)
    return _walk_all(mesh, a, b)[0] == CLEAR


def _segment_pairs(a, b):
    a = as_points(a, "a")
    b = as_points(b, "b")
    if a.shape != b.shape:
        raise QueryError(f"a and b must have the same shape, got {a.shape} and {b.shape}")
    return a, b


@dataclass
class RaycastHits:
    """Result of :func:`raycast_many`: :class:`RaycastHit`'s fields as arrays
    over the segments, without the tetrahedra crossed. ``status`` holds the
    same words ('clear', 'hit', 'start_outside', 'lost')."""
    clear: np.ndarray           # (N,) bool
    status: np.ndarray          # (N,) str
    face: np.ndarray            # (N,) int64, -1 unless hit
    point: np.ndarray           # (N,3): b when clear, the hit point, NaN otherwise
    t: np.ndarray               # (N,): 1 when clear, the hit fraction, NaN otherwise
    normal: np.ndarray          # (N,3): the hit face's normal out of the volume, else NaN

    def __len__(self):
        return len(self.clear)


def raycast_many(mesh, a, b) -> RaycastHits:
    """:func:`raycast` for (N,3) segment ends at once, in one compiled walk
    over all segments (the same walk and answers, segment by segment)."""
    a, b = _segment_pairs(a, b)
    outcome, last, slot, frac = _walk_all(mesh, a, b)
    n = len(a)
    clear = outcome == CLEAR
    hit = np.flatnonzero(outcome == HIT)
    status = np.full(n, "lost", dtype="<U13")
    status[clear] = "clear"
    status[outcome == -1] = "start_outside"
    face = np.full(n, -1, dtype=np.int64)
    point = np.full((n, 3), np.nan)
    t = np.full(n, np.nan)
    normal = np.full((n, 3), np.nan)
    point[clear] = b[clear]
    t[clear] = 1.0
    if len(hit):
        face[hit], normal[hit] = _hit_faces(mesh, last[hit], slot[hit])
        s = np.minimum(frac[hit], 1.0)
        status[hit] = "hit"
        t[hit] = s
        point[hit] = a[hit] + s[:, None] * (b[hit] - a[hit])
    # raycast's order: a non-finite a is 'start_outside', else a non-finite b 'lost'
    bad_b = ~np.isfinite(b).all(axis=1) & np.isfinite(a).all(axis=1)
    status[(outcome == -1) & bad_b] = "lost"
    return RaycastHits(clear, status, face, point, t, normal)
