"""The header's box and grid: the box given is the box written, and the grid
is chosen so that its cell references fit the format.

The header stores the box corners, ``extent = max - min`` and the cell size,
all float32, and a reader takes ``extent == cell * dims`` for granted. The
frame keeps the given corners and makes all three exact whenever float32
allows (``cell = extent / n`` must be a float32 number); otherwise it moves
the max corner up (and the min corner down to a float32 number) by as little
as it can, and :meth:`Frame.change` says what moved and by how much.

Without given dims, :func:`fit_grid` tries grids from the default (cells of
about 10 km, or a tenth of the longest side of a box under 50 km; at most 10
a side) down, preferring dims whose frame is exact,
and takes the finest whose references fit the u16 limit.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import NamedTuple

import numpy as np

from ..errors import BuildError, LimitError
from ..format.layout import U16_MAX
from ..geometry.grid import grid_membership

#: Grid defaults, the disc's conventions: cells of about 10 km, at most 10 per axis.
DEFAULT_CELL = 10_000.0
MAX_DIMS = 10
#: The smallest stage's side: smaller boxes get finer cells than the default.
SMALLEST_STAGE = 50_000.0
#: The largest float32.
F32_MAX = float(np.finfo(np.float32).max)
#: Automatic grids keep their cells within this ratio of each other's size
#: (beyond that of the default grid).
MAX_CELL_RATIO = 2.0


class Frame(NamedTuple):
    """A header box and grid: float32 numbers (as float64) with
    ``hi - lo == cell * dims`` exactly."""
    lo: np.ndarray
    hi: np.ndarray
    cell: np.ndarray
    dims: tuple

    @property
    def n_cells(self) -> int:
        return int(np.prod(self.dims))

    def largest_move(self, lo, hi) -> float | None:
        """The most any corner coordinate of ``lo``..``hi`` moved (metres),
        or None when the box is kept as given."""
        moves = np.abs(np.concatenate([self.lo - np.asarray(lo, np.float64).reshape(3),
                                       self.hi - np.asarray(hi, np.float64).reshape(3)]))
        return float(moves.max()) if moves.any() else None

    def change(self, lo, hi) -> str | None:
        """What this frame moved of the box ``lo``..``hi``, or None."""
        lo = np.asarray(lo, np.float64).reshape(3)
        hi = np.asarray(hi, np.float64).reshape(3)
        moved = []
        for name, old, new in (("min", lo, self.lo), ("max", hi, self.hi)):
            for k in np.flatnonzero(old != new):
                moved.append(f"{name} {'xyz'[k]} {old[k]:.9g} -> {new[k]:.9g} "
                             f"({new[k] - old[k]:+.3g} m)")
        if not moved:
            return None
        nx, ny, nz = self.dims
        return (f"box moved so that {nx}x{ny}x{nz} float32 cells of "
                f"{' x '.join(f'{c:.9g}' for c in self.cell)} m span it exactly: "
                + ", ".join(moved))


def _f32(x: float) -> bool:
    """Is ``x`` a (finite) float32 number?"""
    y = np.float32(x)
    return bool(np.isfinite(y)) and float(y) == x


def _f32_down(x: float) -> float:
    """The largest float32 number <= x."""
    y = np.float32(x)
    if float(y) > x:
        y = np.nextafter(y, np.float32(-np.inf))
    return float(y)


def _f32_up(x: float) -> float:
    """The smallest float32 number >= x."""
    y = np.float32(x)
    if float(y) < x:
        y = np.nextafter(y, np.float32(np.inf))
    return float(y)


def _is_f32(x: Fraction) -> bool:
    """Is the rational ``x`` a (finite) float32 number?"""
    y = float(x)
    return Fraction(y) == x and _f32(y)


def _exact(lo: float, cell: float, d: int) -> bool:
    """``lo``, ``cell``, ``cell * d`` and ``lo + cell * d`` all float32
    numbers, exactly (real arithmetic)."""
    ext = Fraction(cell) * d
    return cell > 0 and all(_is_f32(x) for x in (Fraction(lo), Fraction(cell), ext,
                                                  Fraction(lo) + ext))


def axis_frame(lo: float, hi: float, d: int):
    """``(lo', hi', cell)`` of one axis: float32 numbers with ``lo' <= lo``,
    ``hi' >= hi`` and ``hi' - lo' == cell * d`` exactly. That is ``(lo, hi,
    (hi - lo) / d)`` itself whenever float32 allows; otherwise lo' is the
    float32 number at or below lo and the cell the smallest float32 number
    that gives an exact frame (hi' moves up by as little as that allows);
    when no cell does (lo has finer bits than hi' can hold), lo' and the
    cell are rounded to the finest power of two that works."""
    lo, hi = float(lo), float(hi)
    start = _f32_down(lo)
    need = Fraction(hi) - Fraction(start)
    cell = _f32_up(float(need / d))
    if Fraction(cell) * d < need:
        cell = float(np.nextafter(np.float32(cell), np.float32(np.inf)))
    for _ in range(256):               # float32 steps of the cell: a few suffice
        if _exact(start, cell, d):
            return start, float(Fraction(start) + Fraction(cell) * d), cell
        cell = float(np.nextafter(np.float32(cell), np.float32(np.inf)))
    q = float(np.spacing(np.float32(max(abs(lo), abs(hi), hi - lo))))
    while True:
        start = float(np.floor(lo / q) * q)
        cell = float(np.ceil(float((Fraction(hi) - Fraction(start)) / d) / q) * q)
        if _exact(start, cell, d):
            return start, float(Fraction(start) + Fraction(cell) * d), cell
        q *= 2.0


def check_float32_box(lo, hi):
    """BuildError unless the box ``lo``..``hi`` is finite, has max > min,
    and its corners, extent and diagonal stay within float32 (so every
    position, distance and plane offset a mesh in it stores is finite)."""
    lo = np.asarray(lo, np.float64).reshape(3)
    hi = np.asarray(hi, np.float64).reshape(3)
    if not (np.isfinite(lo).all() and np.isfinite(hi).all()) or np.any(hi <= lo):
        raise BuildError(f"the box must be finite with max > min, got {lo.tolist()} .. "
                         f"{hi.tolist()}")
    with np.errstate(over="ignore"):
        scale = np.sqrt(3.0) * max(float(np.abs(lo).max()), float(np.abs(hi).max()),
                                   float((hi - lo).max()))
    if not scale <= F32_MAX:
        raise BuildError(f"the box {lo.tolist()} .. {hi.tolist()} is too large for the "
                         f"format's float32 numbers: its corners, extent and diagonal must "
                         f"stay below {F32_MAX:.4g} m")
    return lo, hi


def grid_frame(lo, hi, dims) -> Frame:
    """The :class:`Frame` of ``dims`` cells over the box ``lo``..``hi`` (see
    :func:`axis_frame`)."""
    lo, hi = check_float32_box(lo, hi)
    axes = [axis_frame(lo[k], hi[k], int(dims[k])) for k in range(3)]
    new_lo, new_hi, cell = (np.array(v, np.float64) for v in zip(*axes))
    check_float32_box(new_lo, new_hi)
    return Frame(new_lo, new_hi, cell, tuple(int(d) for d in dims))


def default_dims(extent) -> tuple:
    """About 10 km cells, 1..10 per axis (the disc's stages, 50 km and up);
    a box smaller than any stage (longest side under 50 km) gets cells of a
    tenth of its longest side instead, so that a 100 m hangar's grid still
    sorts its tetrahedra (one 10 km cell would list them all)."""
    ext = np.asarray(extent, np.float64)
    longest = float(ext.max())
    cell = DEFAULT_CELL if longest >= SMALLEST_STAGE or longest <= 0 else longest / MAX_DIMS
    return tuple(int(np.clip(np.ceil(e / cell - 1e-9), 1, MAX_DIMS)) for e in ext)


def keeps_axis(lo: float, hi: float, d: int) -> bool:
    """Does :func:`axis_frame` keep ``lo`` and ``hi`` as they are for ``d``
    cells? Only when both are float32 numbers and the cell ``(hi - lo) / d``
    (real arithmetic) gives an exact frame: any other cell it tries is
    larger and moves ``hi`` up. (Asked here directly: ``axis_frame``'s
    search costs milliseconds per count when it fails.)"""
    lo, hi = float(lo), float(hi)
    if not (_f32(lo) and _f32(hi) and hi > lo):
        return False
    cell = (Fraction(hi) - Fraction(lo)) / int(d)
    return _is_f32(cell) and _exact(lo, float(cell), int(d))


def _axis_choices(lo, hi, most):
    """The cell counts 1..``most`` of one axis, those with an exact frame
    first (each group from the most cells down)."""
    exact = [d for d in range(most, 0, -1) if keeps_axis(lo, hi, d)]
    return exact or list(range(most, 0, -1))


def dims_candidates(lo, hi):
    """Grids to try, finest first: the default dims and every coarser one
    whose axes all have exact frames when some do, cells no more uneven than
    the default's (times :data:`MAX_CELL_RATIO`)."""
    lo = np.asarray(lo, np.float64).reshape(3)
    hi = np.asarray(hi, np.float64).reshape(3)
    ext = hi - lo
    top = default_dims(ext)
    base = ext / np.asarray(top)
    allowed = MAX_CELL_RATIO * base.max() / base.min()
    out = []
    for dims in itertools.product(*(_axis_choices(lo[k], hi[k], top[k]) for k in range(3))):
        cell = ext / np.asarray(dims)
        if cell.max() / cell.min() <= allowed * (1 + 1e-9):
            out.append(dims)
    out.sort(key=lambda d: (-int(np.prod(d)), max(d) - min(d)))
    return out


def check_dims(dims) -> tuple:
    """``dims`` as three ints; BuildError unless positive, LimitError past
    the u16 limit of cells."""
    try:
        dims = tuple(int(x) for x in dims)
    except (TypeError, ValueError, OverflowError):
        raise BuildError(f"grid dims must be three positive integers, got {dims}") from None
    if len(dims) != 3 or min(dims) < 1:
        raise BuildError(f"grid dims must be three positive integers, got {dims}")
    n_cells = dims[0] * dims[1] * dims[2]
    if n_cells > U16_MAX:
        raise LimitError(f"the grid {dims[0]}x{dims[1]}x{dims[2]} has {n_cells} grid cells, more "
                         f"than the format's u16 limit of {U16_MAX}: use fewer cells per "
                         "axis (--dims), or leave --dims out", what="grid cells",
                         count=n_cells)
    return dims


def _finest_fitting(tet_points, lo, hi):
    """``(frame, pairs)`` of the finest of :func:`dims_candidates` whose cell
    references fit; LimitError when none does (more tetrahedra than fit in
    one cell)."""
    fewest = None
    for dims in dims_candidates(lo, hi):
        frame = grid_frame(lo, hi, dims)
        pairs = grid_membership(tet_points, frame.lo, frame.cell, dims)
        if len(pairs[1]) <= U16_MAX:
            return frame, pairs
        fewest = len(pairs[1])
    raise LimitError(f"the mesh needs {fewest} cell references even in one grid cell, more "
                     f"than the format's u16 limit of {U16_MAX}: use fewer tetrahedra",
                     what="cell references", count=fewest)


def fit_grid(tet_points, lo, hi, dims=None):
    """``(frame, (cells, tets))``: the grid over the box ``lo``..``hi`` and
    the (cell, tetrahedron) pairs of every tetrahedron ``tet_points`` (T,4,3)
    meeting each closed cell box. ``dims`` given are kept (LimitError, with
    dims that fit, when the references do not); without them the finest of
    :func:`dims_candidates` whose references fit."""
    if dims is None:
        return _finest_fitting(tet_points, lo, hi)
    dims = check_dims(dims)
    frame = grid_frame(lo, hi, dims)
    pairs = grid_membership(tet_points, frame.lo, frame.cell, dims)
    if len(pairs[1]) > U16_MAX:
        fits = _finest_fitting(tet_points, lo, hi)[0].dims
        raise LimitError(f"with --dims {' '.join(map(str, dims))} the grid needs "
                         f"{len(pairs[1])} cell references, more than the format's u16 "
                         f"limit of {U16_MAX}: --dims {' '.join(map(str, fits))} fits, or "
                         "leave --dims out", what="cell references", count=len(pairs[1]))
    return frame, pairs
