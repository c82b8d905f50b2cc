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

All three queries run one compiled walk,
:func:`regn.query.sight._raycast_kernels.walk_segment` (raycast once, with the
tetrahedra crossed; line_of_sight and raycast_many over every segment in one
call), so ``line_of_sight(a, b) == raycast(a, b).clear``. Work is
O(segments x tetrahedra crossed), with O(N) memory.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ...errors import QueryError
from ...status import CLEAR, HIT, LOST, NAMES, START_OUTSIDE
from ..common import as_points, point_xyz, scratch, status_names
from ..locating.locate import locate_tables
from .segment_filter import sight_grid


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

    def __repr__(self):
        # one line (the dataclass's own printed every array in full)
        crossed = f"{len(self.tets)} tetrahedra crossed"
        if self.status != "hit":
            return f"<regn RaycastHit: {self.status}, {crossed}>"
        x, y, z = (float(c) for c in self.point)
        return (f"<regn RaycastHit: hit face {self.face} at t {self.t:.6g}, point "
                f"({x:.6g}, {y:.6g}, {z:.6g}), {crossed}>")

    def to_dict(self) -> dict:
        return {"clear": self.clear, "status": self.status, "face": self.face,
                "point": self.point.tolist(), "t": self.t,
                "normal": self.normal.tolist(), "tets": self.tets.tolist()}


def _kernels():
    from . import _raycast_kernels
    return _raycast_kernels


_NAN3 = np.full(3, np.nan)
_NO_TETS = np.zeros(0, np.int64)
#: raycast's first crossed-tets buffer (a longer walk is rerun with room)
_CROSSED_START = 256
#: segments per chunk of a batch (a thread takes one chunk at a time)
SEGMENT_CHUNK = 8192


def _missed(status, tets=_NO_TETS):
    """A RaycastHit that is neither clear nor a hit."""
    return RaycastHit(False, NAMES[status], -1, _NAN3.copy(), math.nan, _NAN3.copy(),
                      tets.copy())


def raycast(mesh, a, b) -> RaycastHit:
    """Walk the segment a -> b tetrahedron to tetrahedron."""
    ax, ay, az = point_xyz(a, "a")
    bx, by, bz = point_xyz(b, "b")
    if not (math.isfinite(ax) and math.isfinite(ay) and math.isfinite(az)):
        return _missed(START_OUTSIDE)
    if not (math.isfinite(bx) and math.isfinite(by) and math.isfinite(bz)):
        return _missed(LOST)
    ray = _raycast_entry(mesh)
    if ray is None:                      # no tetrahedra
        return _missed(START_OUTSIDE)
    crossed = np.empty(min(_CROSSED_START, mesh.n_tets + 9), dtype=np.int64)
    while True:                          # locate a, then walk, in one compiled call
        outcome, t, j, s, n = ray[0](ray[1], ax, ay, az, bx, by, bz, crossed)
        if n <= len(crossed):
            break
        crossed = np.empty(n, dtype=np.int64)      # long walk: again, recording all
    if outcome == START_OUTSIDE:
        return _missed(START_OUTSIDE)
    tets = crossed[:n].copy()
    if outcome == CLEAR:
        return RaycastHit(True, NAMES[CLEAR], -1, np.array([bx, by, bz]), 1.0, _NAN3.copy(),
                          tets)
    if outcome != HIT:
        return _missed(LOST, tets)
    s = min(s, 1.0)
    face, normal = _hit_face(mesh, t, j)
    point = np.array([ax + s * (bx - ax), ay + s * (by - ay), az + s * (bz - az)])
    return RaycastHit(False, NAMES[HIT], face, point, s, normal, tets)


def _raycast_entry(mesh):
    """(the entry point of the raycast kernel, the mesh's LocateTables), or
    None for a mesh without tetrahedra (cached)."""
    s = scratch(mesh)
    if "raycast" not in s:
        ray = None
        if mesh.n_tets:
            from ..._jit import entry_point
            tables = locate_tables(mesh)
            ray = (entry_point(_kernels().raycast_segment,
                               (tables, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, _NO_TETS)), tables)
        s["raycast"] = ray
    return s["raycast"]


def _hit_face(mesh, t, j):
    """:func:`_hit_faces` for one walk: (face, normal (3,))."""
    exit_face, exit_normal = _exits(mesh)
    if exit_face[t, j] < 0:
        _hit_faces(mesh, np.array([t]), np.array([j]))        # raises its error
    return int(exit_face[t, j]), exit_normal[t, j].copy()


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


def _segment_kernels():
    from . import _segment_filter_kernels
    return _segment_filter_kernels


def line_of_sight(mesh, a, b, *, workers=None) -> np.ndarray:
    """(N,3),(N,3) -> (N,) bool: the segment stays inside the volume
    (``raycast(a[i], b[i]).clear``), on ``workers`` threads (None: all cores)."""
    a, b = segment_pairs(a, b)
    out = np.zeros(len(a), dtype=bool)
    if len(a) and mesh.n_tets:
        tables, sight = locate_tables(mesh), sight_grid(mesh)
        clear = _segment_kernels().segments_clear
        from ..._jit import run_chunks
        run_chunks(lambda i, j, _: clear(tables, sight, a, b, i, j, out), len(a), workers,
                   chunk=SEGMENT_CHUNK)
    return out


def segment_pairs(a, b):
    """Segment ends ``a``, ``b`` as (N,3) float64 arrays of one shape
    (QueryError otherwise): how every batch of segments is taken."""
    a = np.ascontiguousarray(as_points(a, "a"))
    b = np.ascontiguousarray(as_points(b, "b"))
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

    def __repr__(self):
        names, n = np.unique(self.status, return_counts=True)
        counts = ", ".join(f"{c} {s}" for s, c in zip(names.tolist(), n.tolist()))
        return f"<regn RaycastHits: {len(self.status)} segments{': ' + counts if counts else ''}>"

    def __len__(self):
        return len(self.clear)


def raycast_many(mesh, a, b, *, workers=None) -> RaycastHits:
    """:func:`raycast` for (N,3) segment ends at once, on ``workers`` threads
    (the same walk and answers, segment by segment; a segment the filter of
    :mod:`regn.query.sight.segment_filter` finds clear needs no walk for its report)."""
    a, b = segment_pairs(a, b)
    n = len(a)
    code = np.full(n, START_OUTSIDE, dtype=np.int64)
    if not n or not mesh.n_tets:               # raycast's rules with nothing to walk
        code[np.all(np.isfinite(a), axis=1) & ~np.all(np.isfinite(b), axis=1)] = LOST
        return hits_report(code, a, b)
    last = np.empty(n, dtype=np.int64)          # (read only where walked)
    slot = np.empty(n, dtype=np.int64)
    frac = np.empty(n)
    tables, sight = locate_tables(mesh), sight_grid(mesh)
    K = _segment_kernels()
    exit_face, exit_normal = _exits(mesh)
    out = _empty_report(n)
    bad = []

    def walk_and_report(i, j, _):             # both on the threads
        K.segments_walked(tables, sight, a, b, i, j, code, last, slot, frac)
        k = K.segment_reports(code, a, b, last, slot, frac, exit_face, exit_normal, i, j,
                              *out)
        if k >= 0:
            bad.append(k)
    from ..._jit import run_chunks
    run_chunks(walk_and_report, n, workers, chunk=SEGMENT_CHUNK)
    if bad:
        k = min(bad)
        _hit_faces(mesh, last[k:k + 1], slot[k:k + 1])      # raises its error
    clear, face, point, t, normal = out
    return RaycastHits(clear, status_names(code), face, point, t, normal)


def _empty_report(n):
    """(clear, face, point, t, normal) arrays for n segments, unfilled."""
    return (np.empty(n, np.bool_), np.empty(n, np.int64), np.empty((n, 3)), np.empty(n),
            np.empty((n, 3)))


def hits_report(code, a, b) -> RaycastHits:
    """A :class:`RaycastHits` of status codes ``code`` (N,) without the hits'
    details: clear rows report b at t = 1, every other row -1 / NaN (the
    caller fills the hits)."""
    out = _empty_report(len(code))
    if len(code):
        _segment_kernels().segment_reports(code, a, b, None, None, None, None, None, 0,
                                           len(code), *out)
    clear, face, point, t, normal = out
    return RaycastHits(clear, status_names(code), face, point, t, normal)
