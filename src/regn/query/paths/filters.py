"""Temporary blockers: spheres and boxes that close or slow the tetrahedra
they touch, in the manner of Detour's query filter.

A :class:`QueryFilter` belongs to one mesh. Each blocker is a closed ball or
an axis-aligned closed box; it touches a tetrahedron when the two closed
sets meet (exact tests: :func:`regn.geometry._closest_kernels.tet_meets_ball`,
:func:`~regn.geometry._cell_kernels.tet_meets_box`). A blocker either *blocks*
(``scale=None``: no path enters a touched tetrahedron, as with
``exclude``) or *scales* (the cost of crossing a touched tetrahedron is
multiplied by ``scale``, as with ``cost_scale``; several scaling blockers on
one tetrahedron multiply).

Adding a blocker touches only the tetrahedra listed in the fine location
grid's cells under its bounding box, each decided once by the exact test;
lifting it undoes exactly what it did (the factors of the blockers left are
multiplied again in the order they were added, so the arrays come back bit
for bit). Neither rebuilds anything, and neither copies a per-mesh array:
the arrays a search reads are copied once per change, on the first search
after it (:meth:`QueryFilter.applied_to`).

A filter may be changed from one thread while others search with it: each
search reads a snapshot taken under the filter's lock.
"""

from __future__ import annotations

import threading
from collections import namedtuple

import numpy as np

from ...errors import QueryError

#: One blocker: its kind (``"sphere"`` or ``"box"``), its shape (centre and
#: radius, or low and high corners), its factor (None: it blocks) and the
#: tetrahedra it touches.
Blocker = namedtuple("Blocker", ["kind", "shape", "scale", "tets"])


def _kernels():
    from . import _filter_kernels
    return _filter_kernels


def _shape(values, n, what):
    """``values`` as n finite float64 numbers, or QueryError."""
    try:
        a = np.array(values, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise QueryError(f"{what} must be {n} numbers, got {values!r}") from None
    if a.shape != (n,):
        raise QueryError(f"{what} must be {n} numbers, got {a.size}")
    if not np.isfinite(a).all():
        raise QueryError(f"{what} must be finite, got {a.tolist()}")
    return a


def _factor(scale):
    """A blocker's cost factor: None (it blocks) or a number >= 0 (inf: the
    tetrahedra become impassable but may still hold the ends)."""
    if scale is None:
        return None
    try:
        f = float(scale)
    except (TypeError, ValueError):
        raise QueryError(f"a blocker's scale must be a number, got {scale!r}") from None
    if not f >= 0:
        raise QueryError(f"a blocker's scale must be >= 0, got {f}")
    return f


class QueryFilter:
    """Spheres and boxes that block, or scale the cost of, the tetrahedra
    they touch; pass it as ``filter=`` to ``find_path``, ``find_paths`` or
    ``cost_field``.

    >>> f = regn.QueryFilter(mesh)               # doctest: +SKIP
    >>> mine = f.block_sphere((0, 0, 0), 2000)   # a handle
    >>> mesh.find_path(a, b, filter=f)           # never enters a touched tet
    >>> f.lift(mine)                             # the original answers again
    """

    def __init__(self, mesh):
        from ..locating.locate import locate_tables
        self.mesh = mesh
        T = int(mesh.n_tets)
        self._tables = locate_tables(mesh) if T else None
        self._pts = np.ascontiguousarray(mesh.tet_points, dtype=np.float64)
        self._seen = np.zeros(T, dtype=np.bool_)
        self._found = np.zeros(T, dtype=np.int64)
        self._blocks = np.zeros(T, dtype=np.int32)      # blocking blockers per tet
        self._factor = np.ones(T)                       # product of scaling factors
        self._blockers = {}
        self._next = 0
        self._lock = threading.Lock()
        self._snapshot = None                           # (scale, exclude) or None: stale

    # --- blockers -----------------------------------------------------------
    def block_sphere(self, centre, radius, *, scale=None) -> int:
        """Block (or, with ``scale``, multiply the cost of) every tetrahedron
        the closed ball touches; returns the blocker's handle."""
        try:
            values = [*centre, radius]
        except TypeError:
            values = None
        shape = _shape(values, 4, "a sphere (centre x, y, z and radius)")
        if shape[3] < 0:
            raise QueryError(f"a sphere's radius must be >= 0, got {shape[3]}")
        return self._add("sphere", shape, scale)

    def block_box(self, corner0, corner1, *, scale=None) -> int:
        """Block (or scale) every tetrahedron the closed axis-aligned box
        with these two opposite corners touches; returns its handle."""
        try:
            values = [*corner0, *corner1]
        except TypeError:
            values = None
        c = _shape(values, 6, "a box (two corners x, y, z)")
        return self._add("box", np.concatenate([np.minimum(c[:3], c[3:]),
                                                np.maximum(c[:3], c[3:])]), scale)

    def lift(self, handle) -> None:
        """Remove a blocker: the filter is as if it had never been added."""
        with self._lock:
            b = self._blockers.pop(handle, None)
            if b is None:
                raise QueryError(f"no blocker {handle!r} in this filter")
            if b.scale is None:
                self._blocks[b.tets] -= 1
            else:
                self._refactor(b.tets)
            self._snapshot = None

    def clear(self) -> None:
        """Lift every blocker."""
        with self._lock:
            self._blockers.clear()
            self._blocks[:] = 0
            self._factor[:] = 1.0
            self._snapshot = None

    @property
    def blockers(self) -> dict:
        """handle -> :class:`Blocker`, in the order they were added."""
        return dict(self._blockers)

    @property
    def blocked(self) -> np.ndarray:
        """(T,) bool: the tetrahedra a blocking blocker touches."""
        return self._blocks > 0

    def __len__(self):
        return len(self._blockers)

    def _add(self, kind, shape, scale) -> int:
        factor = _factor(scale)
        K = _kernels() if self._tables is not None else None
        with self._lock:
            n = 0
            if K is not None:
                t = self._tables
                n = K.tets_touching(t.cell_start, t.cell_tets, t.frame, t.dims, self._pts,
                                    K.BALL if kind == "sphere" else K.BOX, shape,
                                    self._seen, self._found)
            tets = self._found[:n].copy()
            tets.flags.writeable = False
            handle = self._next
            self._next += 1
            self._blockers[handle] = Blocker(kind, tuple(shape.tolist()), factor, tets)
            if factor is None:
                self._blocks[tets] += 1
            else:
                self._factor[tets] *= factor
            self._snapshot = None
        return handle

    def _refactor(self, tets):
        """The factors of ``tets`` from the scaling blockers left, multiplied
        in the order they were added (as :meth:`_add` did)."""
        self._factor[tets] = 1.0
        for b in self._blockers.values():
            if b.scale is not None:
                common = b.tets[np.isin(b.tets, tets, assume_unique=True)]
                self._factor[common] *= b.scale

    # --- what a search reads -------------------------------------------------
    def arrays(self):
        """(scale, exclude) of the blockers alone, each None when it changes
        nothing; copies, taken under the lock and reused until the next
        change (so never write to them)."""
        with self._lock:
            if self._snapshot is None:
                scaling = any(b.scale is not None for b in self._blockers.values())
                blocking = any(b.scale is None for b in self._blockers.values())
                scale = excl = None
                if scaling:
                    scale = self._factor.copy()
                    scale[np.isnan(scale)] = np.inf      # 0 x inf: impassable
                if blocking:
                    excl = self._blocks > 0
                self._snapshot = (scale, excl)
            return self._snapshot

    def applied_to(self, mesh, scale, excl):
        """Validated ``cost_scale`` / ``exclude`` arrays (or None) with the
        blockers added: factors multiply, blocked tetrahedra are excluded."""
        if mesh is not self.mesh:
            raise QueryError("this filter was made for another mesh")
        fscale, fexcl = self.arrays()
        if fscale is not None:
            if scale is None:
                scale = fscale
            else:
                with np.errstate(invalid="ignore"):
                    scale = scale * fscale       # 0 x inf: NaN, impassable below
                scale[np.isnan(scale)] = np.inf
        if fexcl is not None:
            excl = fexcl if excl is None else excl | fexcl
        return scale, excl
